import Synchronization

/// Where ``TokenAuthentication`` gets its tokens: the current one, and a new one when the
/// server rejected it.
///
/// ```swift
/// let tokens = TokenProvider(
///     token: { try await keychain.accessToken() },
///     refresh: { rejected in try await authService.refresh(replacing: rejected) })
/// ```
public struct TokenProvider: Sendable {
    /// The token to use when the middleware has none yet.
    public var token: @Sendable () async throws -> String
    /// A new token, given the one the server answered 401 to.
    public var refresh: @Sendable (_ rejected: String) async throws -> String

    /// A provider from its two functions.
    public init(
        token: @escaping @Sendable () async throws -> String,
        refresh: @escaping @Sendable (_ rejected: String) async throws -> String
    ) {
        self.token = token
        self.refresh = refresh
    }
}

/// Adds a bearer token to every request; on a 401, refreshes the token once and sends the
/// request again. Concurrent 401s share a single refresh.
///
/// ```swift
/// var configuration = APIClient.Configuration()
/// configuration.middleware = [TokenAuthentication(tokens)]
/// let client = APIClient(baseURL: url, configuration: configuration)
/// // GET /me  Authorization: Bearer <token>   → 401
/// // (one refresh, however many requests got a 401 with that token)
/// // GET /me  Authorization: Bearer <new token> → 200
/// ```
///
/// A second 401 after the refresh is returned as it is (``HTTPError/Kind/unauthorized``); a
/// failed refresh throws ``HTTPError/Kind/unauthorized`` wrapping the provider's error.
public final class TokenAuthentication: Middleware {
    private let provider: TokenProvider
    private let store = TokenStore()
    /// The header field the token goes in.
    public let headerName: String
    /// The scheme written before the token (`Bearer`), or empty for the bare token.
    public let scheme: String

    /// Authentication with `provider`'s tokens in `Authorization: Bearer <token>`.
    public init(_ provider: TokenProvider, headerName: String = "Authorization", scheme: String = "Bearer") {
        self.provider = provider
        self.headerName = headerName
        self.scheme = scheme
    }

    public func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
    {
        // A fetch may outlast the deadline: it runs through `withinDeadline`, a cached token does not.
        let token = try await obtain(context) { try await self.store.current(self.provider, context) }
        var authorized = request
        authorized.headers[headerName] = credentials(token)
        let response = try await next(authorized)
        guard response.status == 401 else { return response }
        let fresh = try await obtain(context) { try await self.store.refreshed(after: token, self.provider, context) }
        authorized.headers[headerName] = credentials(fresh)
        return try await next(authorized)
    }

    private func credentials(_ token: String) -> String {
        scheme.isEmpty ? token : "\(scheme) \(token)"
    }

    private func obtain(_ context: MiddlewareContext, _ body: () async throws -> String) async throws -> String {
        do {
            return try await body()
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(
                .unauthorized, endpoint: context.endpoint, detail: "the token provider failed: \(error)",
                underlying: error)
        }
    }
}

/// The current token and the fetch in progress, so that concurrent callers share one. A cached
/// token is read under a lock, without a hop to another executor.
private final class TokenStore: Sendable {
    private struct State {
        var token: String?
        var pending: Task<String, any Error>?
    }

    private enum Next {
        case token(String)
        case wait(Task<String, any Error>)
    }

    private let state = Mutex(State())

    func current(_ provider: TokenProvider, _ context: MiddlewareContext) async throws -> String {
        try await obtain(context, replacing: nil) { try await provider.token() }
    }

    func refreshed(after rejected: String, _ provider: TokenProvider, _ context: MiddlewareContext) async throws
        -> String
    {
        try await obtain(context, replacing: rejected) { try await provider.refresh(rejected) }
    }

    /// The stored token unless it is `rejected` (another request already replaced it: use the
    /// new one); else the fetch in progress; else a new fetch. Each caller waits within its own
    /// deadline; a caller giving up leaves the fetch to the others, and the fetch stores its own
    /// outcome (a failure is not kept).
    private func obtain(
        _ context: MiddlewareContext, replacing rejected: String?,
        _ fetch: @escaping @Sendable () async throws -> String
    ) async throws -> String {
        let next = state.withLock { state -> Next in
            if let token = state.token, token != rejected { return .token(token) }
            if let pending = state.pending { return .wait(pending) }
            state.token = nil
            // Its outcome is stored under the same lock, so it cannot land before `pending` is set.
            let task = Task {
                do {
                    let value = try await fetch()
                    self.settle(value)
                    return value
                } catch {
                    self.settle(nil)
                    throw error
                }
            }
            state.pending = task
            return .wait(task)
        }
        switch next {
        case .token(let token): return token
        case .wait(let task): return try await context.withinDeadline { try await task.value }
        }
    }

    private func settle(_ value: String?) {
        state.withLock { state in
            state.pending = nil
            state.token = value
        }
    }
}
