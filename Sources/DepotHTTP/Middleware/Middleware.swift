/// A step every request of a client passes through, in order: adapt the request, observe the
/// response or the error, or send again.
///
/// Each middleware calls `next` to continue (the next middleware, then the transport); the
/// first one in ``APIClient/Configuration/middleware`` is the outermost. Below the chain the
/// client applies the deadline, retries and decompression, so a middleware sees one logical
/// exchange: a decompressed response with any status, or an ``HTTPError``.
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

    /// Handles `request`, usually by passing it (changed or not) to `next`.
    func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
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

    /// A context from its parts.
    public init(
        method: HTTPMethod, path: String, isIdempotent: Bool, timeout: Duration, deadline: ContinuousClock.Instant
    ) {
        self.method = method
        self.path = path
        self.isIdempotent = isIdempotent
        self.timeout = timeout
        self.deadline = deadline
        endpoint = "\(method.rawValue) \(path)"
    }
}
