import Foundation

/// A request as a transport sends it: the endpoint resolved against the client's base URL, with
/// every header and the encoded body.
///
/// Middleware sees and may change it before it reaches the transport:
///
/// ```swift
/// var request = request
/// request.headers["X-Trace-ID"] = traceID
/// return try await next(request)
/// ```
public struct TransportRequest: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL, query included.
    public var url: URL
    /// The header fields, including `User-Agent`, `Accept-Encoding` and `Content-Type`.
    public var headers: HeaderFields
    /// The encoded body, if any.
    public var body: Data?

    /// A request from its parts.
    public init(method: HTTPMethod, url: URL, headers: HeaderFields = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
