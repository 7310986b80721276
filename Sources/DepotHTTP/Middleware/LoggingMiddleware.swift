import Logging

/// Logs each call through swift-log: the request, then the status, duration and size of the
/// response, or the error. Credentials never reach the log.
///
/// ```swift
/// configuration.middleware = [LoggingMiddleware(logger: Logger(label: "api"))]
/// // debug: → GET /users/42   http.request.headers: [Authorization: <redacted>, …]
/// // info:  ← 200 GET /users/42 in 12 ms, 348 bytes
/// ```
///
/// The values of `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` (and any
/// other name in ``redactedHeaders``, or that a middleware of the client declares in
/// ``Middleware/credentialHeaders``, such as ``TokenAuthentication``'s `X-Api-Key`) are replaced
/// by `<redacted>`, wherever the logging sits in the chain. URLs are logged without their query,
/// which may hold keys.
public struct LoggingMiddleware: Middleware {
    /// Where the lines go.
    public var logger: Logger
    /// The level of the response line (the request line is at `debug`, failures at `warning`).
    public var level: Logger.Level
    /// Header names (any case) whose values are never logged.
    public var redactedHeaders: Set<String> = HeaderFields.credentials.union(["set-cookie"])

    /// Logging to `logger`, responses at `level`.
    public init(logger: Logger, level: Logger.Level = .info) {
        self.logger = logger
        self.level = level
    }

    /// Logs `request` at `debug` and passes it on, then logs the response at ``level`` or the error at
    /// `warning`; the response or error goes back unchanged.
    public func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
    {
        let name = context.endpoint
        logger.debug(
            "→ \(name)",
            metadata: [
                "http.method": "\(request.method.rawValue)", "http.path": "\(request.url.path)",
                "http.request.headers": redacted(request.headers, context),
                "http.request.bytes": "\(request.body?.count ?? 0)",
            ])
        let start = ContinuousClock.now
        do {
            let response = try await next(request)
            let milliseconds = APIClient.milliseconds(ContinuousClock.now - start)
            logger.log(
                level: level, "← \(response.status) \(name) in \(milliseconds) ms, \(response.body.count) bytes",
                metadata: [
                    "http.status": "\(response.status)", "http.duration_ms": "\(milliseconds)",
                    "http.response.headers": redacted(response.headers, context),
                    "http.response.bytes": "\(response.body.count)",
                ])
            return response
        } catch {
            let milliseconds = APIClient.milliseconds(ContinuousClock.now - start)
            logger.warning("✗ \(name) failed after \(milliseconds) ms: \(error)")
            throw error
        }
    }

    private func redacted(_ headers: HeaderFields, _ context: MiddlewareContext) -> Logger.MetadataValue {
        .array(
            headers.map { field in
                let secret =
                    redactedHeaders.contains { HeaderFields.matches($0, field.name) }
                    || context.credentialHeaders.contains { HeaderFields.matches($0, field.name) }
                let value = secret ? "<redacted>" : field.value
                return .string("\(field.name): \(value)")
            })
    }
}
