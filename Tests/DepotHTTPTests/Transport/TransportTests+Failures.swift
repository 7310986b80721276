import DepotHTTP
import Foundation
import Synchronization
import Testing

extension TransportTests {
    @Test("A connection closed before any answer is a connection failure", arguments: transports)
    func droppedConnection(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL) { $0.retryPolicy = .none }
        let error = await httpError { try await client.send(Call(.get, "/drop?\(kind)")) }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.endpoint == "GET /drop?\(kind)")
    }

    @Test("A connection closed halfway through the body is a connection failure", arguments: transports)
    func droppedMidBody(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL) { $0.retryPolicy = .none }
        let error = await httpError { try await client.send(Bytes(path: "/drop-mid-body")) }
        #expect(
            error?.kind == .connectionFailed, "\(String(describing: error)) \(String(describing: error?.underlying))")
    }

    @Test("A refused connection is a connection failure", arguments: transports)
    func refusedConnection(kind: TransportKind) async throws {
        let client = try await kind.client(of: URL(string: "http://127.0.0.1:1")) { $0.retryPolicy = .none }
        let error = await httpError { try await client.send(Call(.get, "/nothing-listens")) }
        #expect(error?.kind == .connectionFailed)
    }

    @Test("An idempotent request is retried after dropped connections; a POST is not", arguments: transports)
    func retriesAfterDrops(kind: TransportKind) async throws {
        // A new connection for each request: on a kept-alive one, libcurl (URLSession on Linux)
        // adds a resend of its own to the GET's count.
        let raw = try await RawServer.unkept()
        let client = try await kind.client(of: raw.baseURL)
        let id = UUID().uuidString
        let get = await httpError { try await client.send(Call(.get, "/drop/\(id)")) }
        #expect(get?.kind == .connectionFailed)
        #expect(raw.hits("/drop/\(id)") == 3)

        let post = await httpError { try await client.send(Call(.post, "/drop/post-\(id)")) }
        #expect(post?.kind == .connectionFailed)
        #expect(raw.hits("/drop/post-\(id)") == 1)
    }

    @Test("503s are retried until success, and the server counts every attempt", arguments: transports)
    func retriesUntilSuccess(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let client = try await kind.client()
        let id = UUID().uuidString
        try await client.send(Call(.get, "/flaky/\(id)", query: [URLQueryItem(name: "failures", value: "2")]))
        #expect(server.counters.count("flaky-\(id)") == 3)
    }

    @Test("Retries stop after the last attempt; the last answer becomes the error", arguments: transports)
    func retriesExhausted(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let client = try await kind.client()
        let id = UUID().uuidString
        let query = [URLQueryItem(name: "failures", value: "10"), URLQueryItem(name: "status", value: "502")]
        let error = await httpError { try await client.send(Call(.get, "/flaky/\(id)", query: query)) }
        #expect(error?.kind == .serverError)
        #expect(error?.status == 502)
        #expect(server.counters.count("flaky-\(id)") == 3)
    }

    @Test("A POST is not retried unless its endpoint says it is idempotent", arguments: transports)
    func postRetries(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let client = try await kind.client()
        let query = [URLQueryItem(name: "failures", value: "1")]
        let plain = UUID().uuidString
        let error = await httpError { try await client.send(Call(.post, "/flaky/\(plain)", query: query)) }
        #expect(error?.kind == .serverError)
        #expect(server.counters.count("flaky-\(plain)") == 1)

        let idempotent = UUID().uuidString
        try await client.send(Call(.post, "/flaky/\(idempotent)", query: query, idempotent: true))
        #expect(server.counters.count("flaky-\(idempotent)") == 2)
    }

    @Test("429 with Retry-After waits the time the server asks", arguments: transports)
    func retryAfter(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let waits = Mutex<[Duration]>([])
        let client = try await kind.client {
            $0.retryPolicy.sleep = { duration in waits.withLock { $0.append(duration) } }
        }
        let id = UUID().uuidString
        let query = [
            URLQueryItem(name: "failures", value: "2"), URLQueryItem(name: "status", value: "429"),
            URLQueryItem(name: "retryAfter", value: "2"),
        ]
        try await client.send(Call(.get, "/flaky/\(id)", query: query))
        #expect(server.counters.count("flaky-\(id)") == 3)
        #expect(waits.withLock { $0 } == [.seconds(2), .seconds(2)])
    }

    #if canImport(AsyncHTTPClient)
        @Test("A transport that owns its HTTPClient works and shuts it down")
        func ownedClientLifecycle() async throws {
            let transport = AsyncHTTPClientTransport()
            let client = APIClient(baseURL: try await TestServer.shared().baseURL, transport: transport)
            #expect(try await client.send(AnyEndpoint<User>(.get, "/user/3")) == User(id: 3, name: "user 3"))
            try await transport.shutdown()
            let error = await httpError { try await client.send(AnyEndpoint<User>(.get, "/user/3")) }
            #expect(error?.kind == .transportFailed)
            try await AsyncHTTPClientTransport(client: .shared).shutdown()  // a client it was given is left alone
        }
    #endif
}
