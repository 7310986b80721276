/// A step every request of a client passes through, in order: adapt the request, observe the
/// response or the error, or send again.
///
/// Each middleware calls `next` to continue (the next middleware, then the transport); the
/// first one in ``APIClient/Configuration/middleware`` is the outermost. Below the chain the
/// client applies retries and decompression, so a middleware sees one logical exchange: a
/// decompressed response with any status, or an ``HTTPError``.
///
/// The chain runs in the calling task, so cancelling the caller reaches a middleware as usual.
/// The call's deadline ends the exchange in `next`; a middleware that awaits other work which
/// may outlast the deadline without responding to cancellation (a token service, a shared
/// refresh) runs it through ``MiddlewareContext/withinDeadline(_:)``.
///
/// ```swift
/// struct RequestID: Middleware {
///     func intercept(
///         _ request: TransportRequest, context: MiddlewareContext, next: Next
///     ) async throws -> TransportResponse {
///         var request = request
///         request.headers["X-Request-ID"] = UUID().uuidString
///         return try await next(request)
///     }
/// }
/// ```
public protocol Middleware: Sendable {
    /// The rest of the chain.
    typealias Next = @Sendable (TransportRequest) async throws -> TransportResponse

    /// The header fields this middleware puts credentials in (lowercased), such as `x-api-key`:
    /// every middleware of the client sees them in ``MiddlewareContext/credentialHeaders``, so
    /// that logging redacts them wherever it sits in the chain. None by default.
    var credentialHeaders: Set<String> { get }

    /// Handles `request`, usually by passing it (changed or not) to `next`.
    ///
    /// - Parameters:
    ///   - request: The request as the client built it, or as a middleware further out changed it.
    ///   - context: What the call is: the endpoint, its idempotency and its deadline.
    ///   - next: The rest of the chain; may be called more than once (to send again).
    /// - Returns: The response for the middleware further out, or the client (any status).
    /// - Throws: Any error. The exchange below the chain fails with ``HTTPError``s; the client
    ///   maps any other error a middleware throws to an ``HTTPError`` before the caller sees it.
    func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
}

extension Middleware {
    /// None: most middleware adds no credentials.
    public var credentialHeaders: Set<String> { [] }
}

/// What a middleware knows about the call it is part of.
public struct MiddlewareContext: Sendable {
    /// The endpoint's method.
    public let method: HTTPMethod
    /// The endpoint's path (without the base URL or query).
    public let path: String
    /// Whether the endpoint may be sent again.
    public let isIdempotent: Bool
    /// The time the whole call may take.
    public let timeout: Duration
    /// When the call's deadline passes (``timeout`` after it started).
    public let deadline: ContinuousClock.Instant

    /// `METHOD /path`, how errors and logs name the endpoint.
    public let endpoint: String

    /// The header fields (lowercased) that carry credentials some middleware of the client adds
    /// (``Middleware/credentialHeaders``): never to be logged.
    public internal(set) var credentialHeaders: Set<String> = []

    /// Fired by the client when ``deadline`` passes.
    let interruption: TransportInterruption

    /// A context from its parts (for testing a middleware outside a client: its deadline
    /// never fires).
    public init(
        method: HTTPMethod, path: String, isIdempotent: Bool, timeout: Duration, deadline: ContinuousClock.Instant
    ) {
        self.init(
            method: method, path: path, isIdempotent: isIdempotent, timeout: timeout, deadline: deadline,
            interruption: TransportInterruption())
    }

    init(
        method: HTTPMethod, path: String, isIdempotent: Bool, timeout: Duration, deadline: ContinuousClock.Instant,
        interruption: TransportInterruption
    ) {
        self.method = method
        self.path = path
        self.isIdempotent = isIdempotent
        self.timeout = timeout
        self.deadline = deadline
        self.interruption = interruption
        endpoint = "\(method.rawValue) \(path)"
    }

    /// Runs `operation` in a task of its own and stops waiting for it, cancelling it, as soon
    /// as the call's deadline passes or the calling task is cancelled: the call then fails with
    /// ``HTTPError/Kind/timedOut`` (or ``HTTPError/Kind/cancelled``) at once, even if
    /// `operation` ignores cancellation.
    ///
    /// ```swift
    /// let token = try await context.withinDeadline { try await tokenService.fetch() }
    /// ```
    ///
    /// - Throws: `operation`'s error; when the deadline or the caller's cancellation came first,
    ///   an ``HTTPError`` of kind ``HTTPError/Kind/timedOut`` or ``HTTPError/Kind/cancelled``, so
    ///   that middleware further out (metrics, logging) sees what the caller will.
    public func withinDeadline<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value)
        async throws -> Value
    {
        do {
            return try await interruption.race(operation)
        } catch let error as CancellationError {
            throw stopped ?? error
        }
    }

    /// What the call ends with once its deadline has passed (``HTTPError/Kind/timedOut``) or its
    /// caller was cancelled (``HTTPError/Kind/cancelled``); `nil` while neither happened.
    var stopped: HTTPError? {
        if interruption.isInterrupted { return .timedOut(endpoint: endpoint, after: timeout) }
        if Task.isCancelled { return .cancelled(endpoint: endpoint) }
        return nil
    }
}
