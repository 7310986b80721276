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
            configuration: .testing(middleware: [TokenAuthentication(tokens, headerName: "X-Token", scheme: "")]))
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
        let client = authenticatedClient(tokens, stub)
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
        let client = authenticatedClient(tokens, stub)
        async let a: Void = client.send(Call(.get, "/a"))
        async let b: Void = client.send(Call(.get, "/b"))
        _ = try await (a, b)
        #expect(refreshes.withLock { $0 } == 1)
    }

    @Test("A call whose deadline passes during a shared token fetch gives up alone; the fetch finishes for the rest")
    func deadlineDuringSharedFetch() async throws {
        let fetches = Mutex(0)
        let fetching = Signal()
        let released = Signal()
        let tokens = TokenProvider(
            token: {
                fetches.withLock { $0 += 1 }
                fetching.fire()
                // Ignores cancellation; ends only when the test releases it.
                await released.wait()
                return "t1"
            }, refresh: { _ in "t2" })
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        let recorded = Mutex<[RequestMetrics]>([])
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(middleware: [
                MetricsMiddleware { metrics in recorded.withLock { $0.append(metrics) } },
                TokenAuthentication(tokens),
            ]))
        async let patient: Void = client.send(Call(.get, "/me", timeout: .seconds(120)))
        // The patient call is waiting on the fetch before the hurried one joins (a fetch whose every
        // waiter left would be cancelled and forgotten): the fetch starts once its first waiter is in.
        await fetching.wait()
        let hurried = await httpError { try await client.send(Call(.get, "/me", timeout: .milliseconds(100))) }
        // The hurried call is answered while the fetch is still held: it did not wait for it.
        #expect(hurried?.kind == .timedOut)
        // Middleware further out saw the timeout too, not an authentication failure.
        #expect(recorded.withLock { $0.map(\.failure) } == [.timedOut])
        #expect(stub.requests.isEmpty)
        released.fire()
        try await patient
        try await client.send(Call(.get, "/me"))
        #expect(fetches.withLock { $0 } == 1)
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t1"])
    }

    @Test(
        "A fetch every caller gave up on is forgotten: the next call fetches anew, and the old one's late token is not kept"
    )
    func abandonedFetch() async throws {
        let calls = Mutex(0)
        let released = Signal()
        let hungReturned = Signal()
        let tokens = TokenProvider(
            token: {
                let call = calls.withLock {
                    $0 += 1; return $0
                }
                guard call == 1 else { return "fresh" }
                // The first fetch hangs, ignoring cancellation, until the test releases it.
                await released.wait()
                hungReturned.fire()
                return "stale"
            }, refresh: { _ in "t2" })
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        let client = authenticatedClient(tokens, stub)
        let first = await httpError { try await client.send(Call(.get, "/me", timeout: .milliseconds(100))) }
        #expect(first?.kind == .timedOut)
        try await client.send(Call(.get, "/me", timeout: .seconds(120)))
        #expect(calls.withLock { $0 } == 2)
        released.fire()
        await hungReturned.wait()
        try await Task.sleep(for: .milliseconds(50))  // its token reaches the provider, which ignores it
        try await client.send(Call(.get, "/me"))
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer fresh", "Bearer fresh"])
    }

    @Test("A failed token fetch is not kept: the next call fetches again")
    func failedFetchIsForgotten() async throws {
        struct Offline: Error {}
        let attempts = Mutex(0)
        let tokens = TokenProvider(
            token: {
                let attempt = attempts.withLock {
                    $0 += 1; return $0
                }
                if attempt == 1 { throw Offline() }
                return "t1"
            }, refresh: { _ in "t2" })
        let stub = StubTransport()
        stub.stub(.get, "/me", .status(200))
        let client = authenticatedClient(tokens, stub)
        let error = await httpError { try await client.send(Call(.get, "/me")) }
        #expect(error?.kind == .unauthorized)
        #expect(error?.underlying is Offline)
        try await client.send(Call(.get, "/me"))
        #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer t1"])
    }

    /// A client on `stub` with `tokens` in `Authorization: Bearer …`.
    private func authenticatedClient(_ tokens: TokenProvider, _ stub: StubTransport) -> APIClient {
        APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(middleware: [TokenAuthentication(tokens)]))
    }
}
