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

    /// ``headerName``, lowercased: logging redacts it wherever it sits in the chain.
    public var credentialHeaders: Set<String> { [headerName.lowercased()] }

    /// Authentication with `provider`'s tokens in `Authorization: Bearer <token>`.
    public init(_ provider: TokenProvider, headerName: String = "Authorization", scheme: String = "Bearer") {
        self.provider = provider
        self.headerName = headerName
        self.scheme = scheme
    }

    /// Sends `request` with the current token in ``headerName``; on a 401, gets a new token from the
    /// provider (one refresh shared by concurrent callers) and sends the request once more with it.
    ///
    /// The second attempt is made whatever the method (a `POST` too): ``MiddlewareContext/isIdempotent``
    /// is not consulted. A token that is cached is used without a call to the provider.
    ///
    /// - Throws: An ``HTTPError`` of kind ``HTTPError/Kind/unauthorized`` wrapping the provider's
    ///   error when it fails to deliver a token (an ``HTTPError`` the provider throws passes through
    ///   as it is); ``HTTPError/Kind/timedOut`` or ``HTTPError/Kind/cancelled`` when the deadline
    ///   passes or the caller is cancelled while waiting for a token; otherwise whatever `next` throws.
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
/// token is read under a lock, without a hop to another executor; callers waiting for a fetch
/// are continuations, each leaving at its own deadline or cancellation without a task of its own.
private final class TokenStore: Sendable {
    private typealias Waiter = CheckedContinuation<String, any Error>

    private struct Fetch {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
    }

    private struct State {
        var token: String?
        var fetch: Fetch?
        /// The fetch started last, abandoned or not.
        var latest: UInt64?
        var nextID: UInt64 = 0

        mutating func newID() -> UInt64 {
            defer { nextID &+= 1 }
            return nextID
        }
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
    /// new one); else the outcome of the fetch in progress, or of a new one. A failed fetch is
    /// not kept; a fetch every waiter has left (deadlines, cancellations) is cancelled and
    /// forgotten, so a hung provider does not hold later calls (a success it still delivers is
    /// kept when no other fetch has started).
    private func obtain(
        _ context: MiddlewareContext, replacing rejected: String?,
        _ fetch: @escaping @Sendable () async throws -> String
    ) async throws -> String {
        if let token = state.withLock({ $0.token }), token != rejected { return token }
        let waiter = state.withLock { $0.newID() }
        let leave: @Sendable () -> Void = { self.leave(waiter) }
        do {
            return try await withTaskCancellationHandler {
                try await context.interruption.whileRunning(onInterrupt: leave) {
                    try await withCheckedThrowingContinuation { (continuation: Waiter) in
                        join(waiter, continuation, context, replacing: rejected, fetch)
                    }
                }
            } onCancel: {
                leave()
            }
        } catch let error as CancellationError {
            throw context.stopped ?? error
        }
    }

    /// Answers at once (a token, or the caller already gone), or queues `continuation` on the
    /// fetch in progress, starting one when there is none.
    private func join(
        _ waiter: UInt64, _ continuation: Waiter, _ context: MiddlewareContext, replacing rejected: String?,
        _ fetch: @escaping @Sendable () async throws -> String
    ) {
        let (answer, start) = state.withLock { state -> (Result<String, any Error>?, UInt64?) in
            if let token = state.token, token != rejected { return (.success(token), nil) }
            // Checked under the lock `leave` takes: a departure before this point is seen here,
            // one after it finds the continuation queued.
            if Task.isCancelled || context.interruption.isInterrupted { return (.failure(CancellationError()), nil) }
            var start: UInt64?
            if state.fetch == nil {
                let id = state.newID()
                state.token = nil
                state.fetch = Fetch(id: id)
                state.latest = id
                start = id
            }
            state.fetch?.waiters[waiter] = continuation
            return (nil, start)
        }
        if let answer { return continuation.resume(with: answer) }
        guard let start else { return }
        let task = Task {
            let outcome: Result<String, any Error>
            do { outcome = .success(try await fetch()) } catch { outcome = .failure(error) }
            self.settle(start, outcome)
        }
        state.withLock { state in
            if state.fetch?.id == start { state.fetch?.task = task } else { task.cancel() }
        }
    }

    /// A waiter gives up: it gets `CancellationError`; the last one out cancels the fetch.
    private func leave(_ waiter: UInt64) {
        let (continuation, abandoned) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard let continuation = state.fetch?.waiters.removeValue(forKey: waiter) else { return (nil, nil) }
            guard state.fetch?.waiters.isEmpty == true else { return (continuation, nil) }
            defer { state.fetch = nil }
            return (continuation, state.fetch?.task)
        }
        abandoned?.cancel()
        continuation?.resume(throwing: CancellationError())
    }

    /// Fetch `id` ended: its waiters get the outcome, and a success is kept.
    private func settle(_ id: UInt64, _ outcome: Result<String, any Error>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard let fetch = state.fetch, fetch.id == id else {
                // Abandoned: keep a late token unless another fetch has started since.
                if state.latest == id, case .success(let token) = outcome { state.token = token }
                return []
            }
            state.fetch = nil
            if case .success(let token) = outcome { state.token = token }
            return Array(fetch.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
