import CoreMetrics
import Metrics
import Synchronization

/// One finished call, as ``MetricsMiddleware`` reports it.
public struct RequestMetrics: Sendable {
    /// The endpoint as `METHOD /path`.
    public var endpoint: String
    /// The endpoint's method.
    public var method: HTTPMethod
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
///             .record(duration: metrics.duration)
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
                    endpoint: context.endpoint, method: context.method, status: response.status,
                    duration: ContinuousClock.now - start,
                    requestBytes: requestBytes, responseBytes: response.body.count, failure: nil))
            return response
        } catch {
            let failure = HTTPError.mapping(error, endpoint: context.endpoint)
            record(
                RequestMetrics(
                    endpoint: context.endpoint, method: context.method, status: failure.status,
                    duration: ContinuousClock.now - start,
                    requestBytes: requestBytes, responseBytes: 0, failure: failure.kind))
            throw error
        }
    }
}

extension MetricsMiddleware {
    /// Reports every call through swift-metrics, to the backend the process bootstrapped.
    ///
    /// | Metric | Kind | Dimensions | Meaning |
    /// | --- | --- | --- | --- |
    /// | `depot_http_requests_total` | counter | `method`, `status` | calls that ended, by response status (`none` when no response came) |
    /// | `depot_http_request_duration_seconds` | timer | `method` | how long each call took, retries included |
    /// | `depot_http_failures_total` | counter | `method`, `kind` | calls that got no response, by `HTTPError` kind (`connection failed`, `timed out`, …) |
    /// | `depot_http_sent_bytes_total`, `depot_http_received_bytes_total` | counter | `method` | request and (decompressed) response bodies |
    ///
    /// Paths are not a dimension: `/users/42` and `/users/43` would each make new series. For
    /// per-endpoint metrics, give ``init(_:)`` a function that names your endpoints.
    ///
    /// ```swift
    /// MetricsSystem.bootstrap(PrometheusMetricsFactory())   // your backend, once, at start
    /// configuration.middleware = [MetricsMiddleware.swiftMetrics(dimensions: [("api", "airports")])]
    /// ```
    ///
    /// - Parameters:
    ///   - factory: Makes the metrics (default: `MetricsSystem.factory`, as bootstrapped now).
    ///   - dimensions: Added to every metric.
    /// - Returns: The middleware; with swift-metrics' no-op factory, one that reports nothing.
    public static func swiftMetrics(
        factory: any MetricsFactory = MetricsSystem.factory, dimensions: [(String, String)] = []
    ) -> MetricsMiddleware {
        guard !(factory is NOOPMetricsHandler) else { return MetricsMiddleware { _ in } }
        let meters = HTTPMeters(factory: factory, dimensions: dimensions)
        return MetricsMiddleware { metrics in meters.record(metrics) }
    }
}

/// The metrics ``MetricsMiddleware/swiftMetrics(factory:dimensions:)`` reports to, made on first use
/// for each label and combination of dimensions.
private final class HTTPMeters: Sendable {
    private let factory: any MetricsFactory
    private let dimensions: [(String, String)]
    private let made = Mutex<[String: any Sendable]>([:])

    init(factory: any MetricsFactory, dimensions: [(String, String)]) {
        self.factory = factory
        self.dimensions = dimensions
    }

    func record(_ metrics: RequestMetrics) {
        let method = [("method", metrics.method.rawValue)]
        count("depot_http_requests_total", method + [("status", metrics.status.map(String.init) ?? "none")])
        metric("depot_http_request_duration_seconds", method) {
            CoreMetrics.Timer(label: $0, dimensions: $1, factory: $2)
        }.record(duration: metrics.duration)
        if let failure = metrics.failure { count("depot_http_failures_total", method + [("kind", failure.name)]) }
        count("depot_http_sent_bytes_total", method, by: metrics.requestBytes)
        count("depot_http_received_bytes_total", method, by: metrics.responseBytes)
    }

    private func count(_ label: String, _ own: [(String, String)], by amount: Int = 1) {
        guard amount > 0 else { return }
        metric(label, own) { Counter(label: $0, dimensions: $1, factory: $2) }.increment(by: amount)
    }

    /// The metric `label` with `own` dimensions besides the middleware's, made by `make` the first time.
    private func metric<M: Sendable>(
        _ label: String, _ own: [(String, String)],
        make: (String, [(String, String)], any MetricsFactory) -> M
    ) -> M {
        let key = ([label] + own.map { "\($0.0)=\($0.1)" }).joined(separator: "|")
        return made.withLock { made in
            if let metric = made[key] as? M { return metric }
            let metric = make(label, dimensions + own, factory)
            made[key] = metric
            return metric
        }
    }
}
