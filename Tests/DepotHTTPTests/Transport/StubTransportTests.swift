import DepotHTTP
import Foundation
import Testing

@Suite("StubTransport")
struct StubTransportTests {
    // swift-format-ignore: NeverForceUnwrap
    static let base = URL(string: "https://api.test/v1")!

    @Test("Stubbed responses come back in order, the last repeating, and every request is recorded")
    func orderedResponses() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/user/1", .status(503), .json(User(id: 1, name: "Ada")))
        let client = APIClient(baseURL: Self.base, transport: stub, configuration: .testing(retryPolicy: .none))

        let first = await httpError { try await client.send(AnyEndpoint<User>(.get, "/user/1")) }
        #expect(first?.kind == .serverError)
        #expect(try await client.send(AnyEndpoint<User>(.get, "/user/1")) == User(id: 1, name: "Ada"))
        #expect(try await client.send(AnyEndpoint<User>(.get, "/user/1")) == User(id: 1, name: "Ada"))
        #expect(stub.requests.map(\.url.absoluteString) == Array(repeating: "https://api.test/v1/user/1", count: 3))
    }

    @Test("A stub for an endpoint value matches its method and path")
    func stubByEndpoint() async throws {
        let stub = StubTransport()
        let endpoint = EchoEndpoint(method: .post, path: "/things")
        let echo = Echo(method: "POST", path: "/things", query: nil, items: [], headers: [:], body: "")
        stub.stub(endpoint, .json(echo, status: 201))
        let client = APIClient(baseURL: Self.base, transport: stub, configuration: .testing())
        #expect(try await client.send(endpoint) == echo)
        let error = await httpError { try await client.send(EchoEndpoint(method: .get, path: "/things")) }
        #expect(error?.kind == .unexpectedRequest)
    }

    @Test("An unexpected request fails loudly, naming itself and how to stub it")
    func unexpectedRequest() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/known", .status(200))
        let client = APIClient(baseURL: Self.base, transport: stub, configuration: .testing())
        let error = await httpError { try await client.send(Call(.delete, "/unknown")) }
        #expect(error?.kind == .unexpectedRequest)
        #expect(error?.endpoint == "DELETE /v1/unknown")
        #expect(error?.detail.contains("stubbed: GET /known") == true)
        #expect(error?.detail.contains(#"stub(.delete, "/v1/unknown", .status(200))"#) == true)
        #expect(stub.requests.count == 1, "an unexpected request is not retried")
    }

    @Test("In failing mode every request fails with the given error")
    func failingMode() async throws {
        let stub = StubTransport(failingWith: URLError(.notConnectedToInternet))
        let client = APIClient(baseURL: Self.base, transport: stub, configuration: .testing(retryPolicy: .none))
        let error = await httpError { try await client.send(Call(.get, "/anything")) }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.underlying is URLError)
    }

    @Test("A delayed stub longer than the deadline times out")
    func delayedResponseTimesOut() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/slow", .text("late", after: .seconds(3_600)), .text("fast"))
        let client = APIClient(
            baseURL: Self.base, transport: stub, configuration: .testing(timeout: .milliseconds(100)))
        let error = await httpError { try await client.send(AnyEndpoint<String>(.get, "/slow", decoder: .text)) }
        #expect(error?.kind == .timedOut)
        #expect(error?.description == "GET /slow: timed out: no complete response within 100 ms")
        // The next stubbed response is served. Its deadline is an hour: a full test run on 2 cores
        // once kept this call from a thread for more than 30 s, and no bound on time is asserted here.
        let patient = APIClient(
            baseURL: Self.base, transport: stub, configuration: .testing(timeout: .seconds(3_600)))
        #expect(try await patient.send(AnyEndpoint<String>(.get, "/slow", decoder: .text)) == "fast")
    }

    @Test("Cancelling the calling task surfaces as cancellation")
    func cancellation() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/slow", .status(200, after: .seconds(3_600)))
        let sent = Signal()
        let client = APIClient(
            baseURL: Self.base, transport: Announcing(stub, sent: sent), configuration: .testing())
        let task = Task { try await client.send(Call(.get, "/slow")) }
        // Cancelled once the request is in the transport's hands, however long it took to get a thread.
        await sent.wait()
        task.cancel()
        let result = await task.result
        guard case .failure(let error as HTTPError) = result else {
            Issue.record("expected an HTTPError, got \(result)")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(error.underlying is CancellationError)
    }

    @Test("A task cancelled before sending never reaches the transport")
    func cancelledBeforeSending() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/x", .status(200))
        let client = APIClient(baseURL: Self.base, transport: stub, configuration: .testing())
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(Call(.get, "/x"))
        }
        let result = await task.result
        guard case .failure(let error as HTTPError) = result else {
            Issue.record("expected an HTTPError, got \(result)")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(stub.requests.isEmpty)
    }
}

/// A transport that fires `sent` when a request reaches it, then lets `stub` answer. Like the stub,
/// it implements only `send(_:maximumBodySize:)`: the client runs it the same way.
private struct Announcing: Transport {
    let stub: StubTransport
    let sent: Signal

    init(_ stub: StubTransport, sent: Signal) {
        self.stub = stub
        self.sent = sent
    }

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        sent.fire()
        return try await stub.send(request, maximumBodySize: maximumBodySize)
    }
}
