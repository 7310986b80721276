import DepotHTTP
import Foundation
import Synchronization
import Testing

@Suite("Token authentication")
struct TokenAuthenticationTests {
    @Test("The token goes in the configured header; the first token is fetched once")
    func header() async throws {
        let fetches = Mutex(0)
        let tokens = TokenProvider(
            token: {
                fetches.withLock { $0 += 1 }; return "t1"
            }, refresh: { _ in "t2" })
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .init(middleware: [TokenAuthentication(tokens, headerName: "X-Token", scheme: "")]))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { try await client.send(Call(.get, "/me")) } }
            try await group.waitForAll()
        }
        #expect(stub.requests.allSatisfy { $0.headers["X-Token"] == "t1" && $0.headers["Authorization"] == nil })
        #expect(fetches.withLock { $0 } == 1)
    }

    @Test("A failed refresh is unauthorized and wraps the provider's error")
    func refreshFails() async throws {
        struct Expired: Error {}
        let tokens = TokenProvider(token: { "old" }, refresh: { _ in throw Expired() })
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(401))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .init(middleware: [TokenAuthentication(tokens)]))
        let error = await httpError { try await client.send(Call(.get, "/me")) }
        #expect(error?.kind == .unauthorized)
        #expect(error?.underlying is Expired)
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer old"])
    }

    @Test("A request that got a 401 after another request refreshed uses the new token without refreshing again")
    func staggeredRefresh() async throws {
        let refreshes = Mutex(0)
        let tokens = TokenProvider(
            token: { "old" },
            refresh: { _ in
                refreshes.withLock { $0 += 1 }; return "new"
            })
        let stub = StubTransport()
        stub.stub(.get, "/a", .status(401), .status(200))
        stub.stub(.get, "/b", .status(401, after: .milliseconds(50)), .status(200))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .init(middleware: [TokenAuthentication(tokens)]))
        async let a: Void = client.send(Call(.get, "/a"))
        async let b: Void = client.send(Call(.get, "/b"))
        _ = try await (a, b)
        #expect(refreshes.withLock { $0 } == 1)
    }
}
