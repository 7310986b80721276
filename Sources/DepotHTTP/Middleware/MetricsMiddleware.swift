/// One finished call, as ``MetricsMiddleware`` reports it.
public struct RequestMetrics: Sendable {
    /// The endpoint as `METHOD /path`.
    public var endpoint: String
    /// The response status, or `nil` when no response arrived.
    public var status: Int?
    /// From entering the middleware to the response or error, retries included.
    public var duration: Duration
    /// The request body's size.
    public var requestBytes: Int
    /// The response body's size after decompression (0 on failure).
    public var responseBytes: Int
    /// The kind of failure, or `nil` when a response arrived (whatever its status).
    public var failure: HTTPError.Kind?
}

/// Reports the duration, status and sizes of every call to a function — a hook for
/// swift-metrics, StatsD or a test.
///
/// ```swift
/// configuration.middleware = [
///     MetricsMiddleware { metrics in
///         Timer(label: "http.duration", dimensions: [("endpoint", metrics.endpoint)])
///             .recordNanoseconds(metrics.duration.nanoseconds)
///     }
/// ]
/// ```
public struct MetricsMiddleware: Middleware {
    private let record: @Sendable (RequestMetrics) -> Void

    /// Metrics reported to `record`, called once per call when it finishes.
    public init(_ record: @escaping @Sendable (RequestMetrics) -> Void) {
        self.record = record
    }

    /// Passes `request` on and reports one ``RequestMetrics`` when the response or error comes back;
    /// the response or error goes back unchanged.
    public func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
    {
        let start = ContinuousClock.now
        let requestBytes = request.body?.count ?? 0
        do {
            let response = try await next(request)
            record(
                RequestMetrics(
                    endpoint: context.endpoint, status: response.status, duration: ContinuousClock.now - start,
                    requestBytes: requestBytes, responseBytes: response.body.count, failure: nil))
            return response
        } catch {
            let failure = HTTPError.mapping(error, endpoint: context.endpoint)
            record(
                RequestMetrics(
                    endpoint: context.endpoint, status: failure.status, duration: ContinuousClock.now - start,
                    requestBytes: requestBytes, responseBytes: 0, failure: failure.kind))
            throw error
        }
    }
}
