import DepotHTTP
import DepotTestSupport
import Foundation
import Testing

@Suite("Client edge cases")
struct ClientEdgeCaseTests {
    @Test("AnyEndpoint<Data> hands back the raw body, not JSON-decoded bytes")
    func anyEndpointData() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/raw", .text("not json"))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())
        #expect(try await client.send(AnyEndpoint<Data>(.get, "/raw")) == Data("not json".utf8))
    }

    @Test("a stub for a path without a leading slash matches the request the client builds")
    func stubPathWithoutSlash() async throws {
        let stub = StubTransport()
        stub.stub(.get, "users/1", .text("ok"))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())
        #expect(try await client.send(AnyEndpoint<String>(.get, "users/1", decoder: .text)) == "ok")
    }

    @Test("a base URL with a query is refused with an error naming it, before anything is sent")
    func baseURLWithQuery() async throws {
        let stub = StubTransport()
        let client = APIClient(
            baseURL: try #require(URL(string: "https://api.test/v1?key=1")), transport: stub, configuration: .testing())
        let error = await httpError { try await client.send(Call(.get, "/users")) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.detail.contains("https://api.test/v1?key=1 has a query or fragment") == true)
        #expect(stub.requests.isEmpty)
    }

    @Test("a custom redacted header is hidden whatever the case of its name")
    func redactionIgnoresCase() async throws {
        let (logger, store) = CapturingLogHandler.logger()
        var logging = LoggingMiddleware(logger: logger)
        logging.redactedHeaders.insert("X-Api-Key")
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(headers: ["x-api-key": "key-secret"], middleware: [logging]))
        try await client.send(Call(.get, "/me"))
        let text = store.lines.map(\.fullText).joined(separator: "\n")
        #expect(!text.contains("key-secret"))
        #expect(text.contains("x-api-key: <redacted>"))
    }

    @Test("a token in a custom header is never logged, whether logging sits inside or outside the token's middleware")
    func customTokenHeaderIsRedacted() async throws {
        let tokens = TokenProvider(token: { "token-secret" }, refresh: { _ in "token-secret-2" })
        for inside in [false, true] {
            let (logger, store) = CapturingLogHandler.logger()
            let logging = LoggingMiddleware(logger: logger, level: .info)
            let authentication = TokenAuthentication(tokens, headerName: "X-Api-Key", scheme: "")
            let stub = StubTransport()
            stub.stub(.get, "/me", .status(200, headers: ["X-Api-Key": "token-secret"]))
            let client = APIClient(
                baseURL: StubTransportTests.base, transport: stub,
                configuration: .testing(middleware: inside ? [authentication, logging] : [logging, authentication]))
            try await client.send(Call(.get, "/me"))
            #expect(stub.requests.first?.headers["x-api-key"] == "token-secret", "the token was sent")
            let text = store.lines.map(\.fullText).joined(separator: "\n")
            #expect(!text.contains("token-secret"), "inside: \(inside)\n\(text)")
            #expect(text.contains("X-Api-Key: <redacted>"), "inside: \(inside)\n\(text)")
        }
    }

    @Test(
        "the deadline covers middleware too: a token provider that hangs times out the call", .timeLimit(.minutes(10)))
    func deadlineCoversMiddleware() async throws {
        let released = Signal()
        let tokens = TokenProvider(
            token: {
                // Hangs, ignoring cancellation, until the test releases it after the call ended.
                await released.wait()
                return "late"
            }, refresh: { _ in "t2" })
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(timeout: .milliseconds(200), middleware: [TokenAuthentication(tokens)]))
        let error = await httpError { try await client.send(Call(.get, "/me")) }
        // The provider was still hanging: ending at all is the deadline's doing (a call that waited
        // for it would hang until the time limit).
        #expect(error?.kind == .timedOut)
        released.fire()
        #expect(stub.requests.isEmpty)
    }

    @Test("a call that ends past its deadline (work nothing interrupts) fails as timed out, not with the late answer")
    func lateAnswerTimesOut() async throws {
        struct Dawdling: Middleware {
            func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
                -> TransportResponse
            {
                let response = try await next(request)
                // Dawdles past the deadline, whenever the answer came, heeding nothing.
                while ContinuousClock.now < context.deadline + .milliseconds(50) {
                    await sleepIgnoringCancellation(milliseconds: 10)
                }
                return response
            }
        }
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        // A deadline the immediate stub answer meets even on a loaded machine.
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(timeout: .seconds(2), middleware: [Dawdling()]))
        let error = await httpError { try await client.send(Call(.get, "/me")) }
        #expect(error?.kind == .timedOut)
        #expect(stub.requests.count == 1)
    }

    @Test("a timeout too large for nanoseconds is taken as never, not a crash")
    func hugeTimeout() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/me", .text("ok"))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub, configuration: .testing(timeout: .seconds(Int64.max)))
        #expect(try await client.send(AnyEndpoint<String>(.get, "/me", decoder: .text)) == "ok")
    }
}
