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

/// The current token and the refresh in progress, so that concurrent callers share one.
private actor TokenStore {
    private var token: String?
    private var pending: Task<String, any Error>?

    func current(_ provider: TokenProvider, _ context: MiddlewareContext) async throws -> String {
        if let token { return token }
        return try await shared(context) { try await provider.token() }
    }

    func refreshed(after rejected: String, _ provider: TokenProvider, _ context: MiddlewareContext) async throws
        -> String
    {
        // Another request already replaced the rejected token: use the new one.
        if let token, token != rejected { return token }
        return try await shared(context) { try await provider.refresh(rejected) }
    }

    /// Runs `fetch` unless a fetch is in progress, in which case its result is shared. Each
    /// caller waits within its own deadline; a caller giving up leaves the fetch to the others,
    /// and the fetch stores its own outcome.
    private func shared(_ context: MiddlewareContext, _ fetch: @escaping @Sendable () async throws -> String)
        async throws -> String
    {
        let task: Task<String, any Error>
        if let pending {
            task = pending
        } else {
            token = nil
            task = Task {
                do {
                    let value = try await fetch()
                    self.settle(value)
                    return value
                } catch {
                    self.settle(nil)
                    throw error
                }
            }
            pending = task
        }
        return try await context.withinDeadline { try await task.value }
    }

    private func settle(_ value: String?) {
        pending = nil
        token = value
    }
}
