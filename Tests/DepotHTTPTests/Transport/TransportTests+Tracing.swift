import DepotHTTP
import DepotTestSupport
import Foundation
import InMemoryTracing
import Testing
import Tracing

extension TransportTests {
    /// Runs `body` under a root span of `tracer` and returns the spans of its trace, the root first.
    private func traced(
        _ tracer: InMemoryTracer, _ body: () async throws -> Void
    ) async throws -> (root: InMemorySpan, spans: [FinishedInMemorySpan]) {
        let root = tracer.startSpan("caller", context: .topLevel)
        try await InstrumentationContext.withValue(root.context) { try await body() }
        root.end()
        return (root, tracer.finishedSpans.filter { $0.traceID == root.traceID && $0.spanID != root.spanID })
    }

    /// A client of the loopback test server on `kind` that traces through a new in-memory tracer.
    private func tracedClient(_ kind: TransportKind) async throws -> (InMemoryTracer, APIClient) {
        let tracer = InMemoryTracer()
        return (tracer, try await kind.client { $0.tracing = HTTPTracing(tracer: tracer) })
    }

    @Test(
        "A call is one client span under the caller's span, with OpenTelemetry's HTTP attributes, and the server receives its context",
        arguments: transports)
    func tracedCall(kind: TransportKind) async throws {
        let (tracer, client) = try await tracedClient(kind)
        var echo: Echo?
        let (root, spans) = try await traced(tracer) {
            echo = try await client.send(
                EchoEndpoint(query: [URLQueryItem(name: "api_key", value: "query-secret")]))
        }
        #expect(spans.count == 1, "\(spans.map(\.operationName))")
        let span = try #require(spans.first)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.parentSpanID == root.spanID)
        #expect(span.status == nil)
        let url = client.baseURL
        #expect(span.text("http.request.method") == "GET")
        #expect(span.text("server.address") == url.host)
        #expect(span.text("server.port") == "\(url.port ?? 0)")
        #expect(span.text("url.full") == "\(url.absoluteString)/echo", "the query may hold keys: left out")
        #expect(span.text("http.response.status_code") == "200")
        #expect(span.attributes["http.request.resend_count"] == nil)
        #expect(span.attributes["error.type"] == nil)

        // The server saw the span's context, so it can continue the trace.
        let headers = try #require(echo?.headers)
        #expect(headers[InMemoryTracer.traceIDKey] == root.traceID)
        #expect(headers[InMemoryTracer.spanIDKey] == span.spanID)
    }

    @Test(
        "A retried call is a span per attempt, the later one counting the resend, the failed one marked with its status",
        arguments: transports)
    func tracedRetries(kind: TransportKind) async throws {
        let (tracer, client) = try await tracedClient(kind)
        let id = UUID().uuidString
        let (root, spans) = try await traced(tracer) {
            try await client.send(Call(.get, "/flaky/\(id)", query: [URLQueryItem(name: "failures", value: "1")]))
        }
        #expect(spans.count == 2, "\(spans.map(\.operationName))")
        #expect(spans.allSatisfy { $0.parentSpanID == root.spanID })
        let (failed, succeeded) = (try #require(spans.first), try #require(spans.last))
        #expect(failed.text("http.response.status_code") == "503")
        #expect(failed.text("error.type") == "503")
        #expect(failed.status?.code == .error)
        #expect(failed.attributes["http.request.resend_count"] == nil)
        #expect(succeeded.text("http.response.status_code") == "200")
        #expect(succeeded.text("http.request.resend_count") == "1")
        #expect(succeeded.status == nil)
    }

    @Test("A redirect is a span of its own, counted as a resend", arguments: transports)
    func tracedRedirect(kind: TransportKind) async throws {
        let (tracer, client) = try await tracedClient(kind)
        let (_, spans) = try await traced(tracer) {
            try await client.send(Call(.get, "/redirect", query: [URLQueryItem(name: "to", value: "/echo")]))
        }
        #expect(spans.map { $0.text("http.response.status_code") } == ["302", "200"])
        #expect(spans.last?.text("http.request.resend_count") == "1")
        #expect(spans.last?.text("url.full").hasSuffix("/echo") == true)
        #expect(spans.first?.status == nil, "a redirect is no error")
    }

    @Test("A call that gets no response ends its span with status error and the failure's kind", arguments: transports)
    func tracedFailure(kind: TransportKind) async throws {
        let tracer = InMemoryTracer()
        let client = try await kind.client(of: URL(string: "http://127.0.0.1:1")) {
            $0.tracing = HTTPTracing(tracer: tracer)
            $0.retryPolicy = .none
        }
        var failure: HTTPError?
        _ = try await traced(tracer) { failure = await httpError { try await client.send(Call(.get, "/ping")) } }
        #expect(failure?.kind == .connectionFailed)
        let span = try #require(tracer.finishedSpans.first { $0.kind == .client })
        #expect(span.status?.code == .error)
        #expect(span.text("error.type") == "connection failed")
        #expect(!span.errors.isEmpty)
        #expect(span.attributes["http.response.status_code"] == nil)
    }

    @Test("Without a tracer the client makes no span and adds no header field", arguments: transports)
    func untraced(kind: TransportKind) async throws {
        let tracer = InMemoryTracer()
        let client = try await kind.client { $0.tracing = .disabled }
        var echo: Echo?
        let (_, spans) = try await traced(tracer) { echo = try await client.send(EchoEndpoint()) }
        #expect(spans.isEmpty)
        #expect(echo?.headers[InMemoryTracer.traceIDKey] == nil)
        #expect(HTTPTracing.disabled.tracer == nil)
    }
}
