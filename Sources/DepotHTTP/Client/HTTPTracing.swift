import Foundation
import Tracing

/// How an ``APIClient`` reports the requests it sends through swift-distributed-tracing: one
/// client span per request on the wire, a child of the span the caller is in, and the span's
/// context injected into the request's header fields so that the server continues the trace.
///
/// | Span | Kind | Attributes (OpenTelemetry's HTTP client conventions) |
/// | --- | --- | --- |
/// | `GET`, `POST`, … (the method) | client | `http.request.method`, `server.address`, `server.port`, `url.full` (without its query, which may hold keys), `http.response.status_code`, `http.request.resend_count` (retries and redirects before this request), `error.type` (the status from 400 up, or the ``HTTPError/Kind`` name when no response came) |
///
/// A status from 400 up and a failed exchange end the span with status `error`. Each retry and
/// each redirect is a span of its own, as the conventions ask, so a call retried once shows two
/// sibling spans. The header fields the context goes in are the tracer's choice: an OpenTelemetry
/// tracer (swift-otel) writes W3C `traceparent` and `tracestate`.
///
/// With swift-distributed-tracing's default no-op tracer the client makes no spans and adds no
/// header fields.
///
/// ```swift
/// InstrumentationSystem.bootstrap(tracer)                      // your tracer, once, at start
/// let client = APIClient(baseURL: url)                          // traces through it
/// try await withSpan("refresh") { _ in try await client.send(GetUser(id: 42)) }
/// // refresh → GET (client; url.full https://api.example.com/v1/users/42, status 200)
/// ```
public struct HTTPTracing: Sendable {
    /// The tracer spans go to; `nil` when nothing is traced.
    public var tracer: (any Tracer)?

    /// Spans through `tracer`; none when it is `nil`.
    public init(tracer: (any Tracer)?) {
        self.tracer = tracer
    }

    /// No spans and no header fields.
    public static let disabled = HTTPTracing(tracer: nil)

    /// Spans through the tracer swift-distributed-tracing is bootstrapped with now (none with its
    /// default no-op tracer).
    public static var bootstrapped: HTTPTracing {
        let tracer = InstrumentationSystem.tracer
        return HTTPTracing(tracer: tracer is NoOpTracer ? nil : tracer)
    }

    /// Sends `request` through `send` inside a client span when there is a tracer, with the span's
    /// context injected into the request's header fields.
    func send(
        _ request: TransportRequest, endpoint: String, resends: Int,
        _ send: (TransportRequest) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        guard let tracer else { return try await send(request) }
        let span = tracer.startAnySpan(
            request.method.rawValue, context: InstrumentationContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        span.attributes = Self.attributes(of: request, resends: resends)
        var request = request
        tracer.inject(span.context, into: &request.headers, using: HeaderFieldsInjector())
        do {
            let response = try await InstrumentationContext.withValue(span.context) { try await send(request) }
            span.attributes["http.response.status_code"] = response.status
            if response.status >= 400 {
                span.attributes["error.type"] = "\(response.status)"
                span.setStatus(SpanStatus(code: .error))
            }
            return response
        } catch {
            span.attributes["error.type"] = HTTPError.mapping(error, endpoint: endpoint).kind.name
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    /// The attributes a request's span starts with.
    static func attributes(of request: TransportRequest, resends: Int) -> SpanAttributes {
        var attributes = SpanAttributes()
        attributes["http.request.method"] = request.method.rawValue
        let url = request.url
        if let host = url.host { attributes["server.address"] = host }
        if let port = url.port ?? Self.defaultPort(url.scheme) { attributes["server.port"] = port }
        attributes["url.full"] = Self.withoutQuery(url)
        if resends > 0 { attributes["http.request.resend_count"] = resends }
        return attributes
    }

    /// `url` without its user, password, query and fragment.
    static func withoutQuery(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.path }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        return parts.string ?? url.path
    }

    private static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}

/// Puts a tracer's propagation fields into a request's header fields, replacing any of the same name.
struct HeaderFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HeaderFields) {
        carrier[key] = value
    }
}
