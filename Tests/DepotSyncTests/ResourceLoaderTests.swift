import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import Foundation
import Synchronization
import Testing

/// Counts the requests that reach the real transport, by path.
final class CountingTransport: Transport {
    private let base: any Transport = APIClient.defaultTransport
    private let counts = Mutex<[String: Int]>([:])
    private let gate: Mutex<(waiting: Bool, continuations: [CheckedContinuation<Void, Never>])>

    init(holding: Bool = false) { gate = Mutex((holding, [])) }

    func count(_ path: String) -> Int { counts.withLock { $0[path, default: 0] } }

    /// Lets held requests go on.
    func release() {
        let waiting = gate.withLock { state in
            state.waiting = false
            defer { state.continuations = [] }
            return state.continuations
        }
        for continuation in waiting { continuation.resume() }
    }

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        counts.withLock { $0[request.url.path, default: 0] += 1 }
        await withCheckedContinuation { continuation in
            let held = gate.withLock { state in
                if state.waiting { state.continuations.append(continuation) }
                return state.waiting
            }
            if !held { continuation.resume() }
        }
        return try await base.send(request, maximumBodySize: maximumBodySize)
    }
}

/// Holds the first response to `path` after it arrived, until released: a response made before
/// whatever the test does meanwhile. Other requests pass.
final class HoldingResponseTransport: Transport {
    private let base: any Transport = APIClient.defaultTransport
    private let path: String
    private let state = Mutex(
        (
            count: 0, released: false, received: [CheckedContinuation<Void, Never>](),
            held: [CheckedContinuation<Void, Never>]()
        ))

    init(path: String) { self.path = path }

    /// How many requests to the path were sent.
    var count: Int { state.withLock { $0.count } }

    /// Returns once the first response to the path has arrived (and is held).
    func firstResponseReceived() async {
        await withCheckedContinuation { continuation in
            let arrived = state.withLock { state in
                if state.count > 0 && !state.held.isEmpty { return true }
                state.received.append(continuation)
                return false
            }
            if arrived { continuation.resume() }
        }
    }

    /// Hands the held response on.
    func release() {
        let held = state.withLock { state in
            state.released = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        let response = try await base.send(request, maximumBodySize: maximumBodySize)
        guard request.url.path == path else { return response }
        await withCheckedContinuation { continuation in
            let (hold, waiters) = state.withLock { state in
                state.count += 1
                guard state.count == 1, !state.released else { return (false, [CheckedContinuation<Void, Never>]()) }
                state.held.append(continuation)
                defer { state.received = [] }
                return (true, state.received)
            }
            for waiter in waiters { waiter.resume() }
            if !hold { continuation.resume() }
        }
        return response
    }
}

@Suite("Resources: a screen's data, offline first", .timeLimit(.minutes(10)))
struct ResourceLoaderTests {
    static func norway(_ policy: RefreshPolicy) -> Resource<AirportsAPI.List, AirportRecordMapper> {
        Resource(
            AirportsAPI.List(country: "NO", limit: 1_000), mapper: AirportRecordMapper(), where: \.country == "NO",
            orderBy: [.ascending(\.icao)], policy: policy)
    }

    @Test("cache first: the local rows at once, one refresh the first time, none once stored")
    func cacheFirst() async throws {
        try await withSyncServer { server, serverStore in
            let transport = CountingTransport()
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(store: store, client: APIClient(baseURL: server.baseURL, transport: transport))
            let expected = try await serverStore.repository(Airport.self).fetch(
                where: \.country == "NO", orderBy: [.ascending(\.icao)])
            var iterator = loader.observe(Self.norway(.cacheFirst)).makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.rows.isEmpty)  // nothing stored yet: the local answer, at once
            var snapshot = first
            while snapshot.rows != expected || snapshot.refresh.isRefreshing {
                snapshot = try #require(try await iterator.next())
            }
            #expect(snapshot.refresh.lastRefreshed != nil)
            #expect(snapshot.refresh.error == nil)
            #expect(transport.count("/airports") == 1)

            var again = loader.observe(Self.norway(.cacheFirst)).makeAsyncIterator()
            #expect(try await again.next()?.rows == expected)
            #expect(transport.count("/airports") == 1)  // stored: no request
        }
    }

    @Test("stale-while-revalidate refreshes only past its maximum age; local only never asks")
    func staleWhileRevalidate() async throws {
        try await withSyncServer { server, _ in
            let transport = CountingTransport()
            let clock = TestClock()
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(
                store: store, client: APIClient(baseURL: server.baseURL, transport: transport), clock: clock.function)
            try await loader.refresh(Self.norway(.localOnly))
            #expect(transport.count("/airports") == 1)
            var fresh = loader.observe(Self.norway(.staleWhileRevalidate(maxAge: .seconds(60)))).makeAsyncIterator()
            #expect(try await fresh.next()?.rows.isEmpty == false)
            #expect(transport.count("/airports") == 1)
            clock.advance(120)
            var stale = loader.observe(Self.norway(.staleWhileRevalidate(maxAge: .seconds(60)))).makeAsyncIterator()
            var snapshot = try #require(try await stale.next())
            while snapshot.refresh.lastRefreshed != clock.date() {
                snapshot = try #require(try await stale.next())
            }
            #expect(transport.count("/airports") == 2)
            var local = loader.observe(Self.norway(.localOnly)).makeAsyncIterator()
            #expect(try await local.next()?.rows.isEmpty == false)
            #expect(transport.count("/airports") == 2)
        }
    }

    @Test("network first hands out its first rows after the refresh; a failed one shows next to the stored rows")
    func networkFirstAndFailure() async throws {
        try await withSyncServer { server, _ in
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(store: store, client: APIClient(baseURL: server.baseURL))
            var iterator = loader.observe(Self.norway(.networkFirst)).makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(!first.rows.isEmpty)
            #expect(first.refresh.lastRefreshed != nil)

            // Offline: a loader on the same store whose server refuses connections (nothing listens
            // on port 1). Not the stopped server's port: another test's server may take it meanwhile
            // (once a silent one, and the refresh timed out after a minute instead of failing).
            await server.stop()
            let refused = ResourceLoader(
                store: store, client: APIClient(baseURL: try #require(URL(string: "http://127.0.0.1:1"))))
            var offline = refused.observe(Self.norway(.networkFirst)).makeAsyncIterator()
            let snapshot = try #require(try await offline.next())
            #expect(snapshot.rows == first.rows)  // the stored rows, as they were
            let error = try #require(snapshot.refresh.error as? HTTPError)
            #expect(error.kind == .connectionFailed)
            // Read back from the store by the second loader: equal to the stored date's precision.
            let refreshed = try #require(first.refresh.lastRefreshed)
            let kept = try #require(snapshot.refresh.lastRefreshed)
            #expect(abs(kept.timeIntervalSince(refreshed)) < 0.001, "\(kept) vs \(refreshed)")
        }
    }

    struct Place: Equatable, Sendable {
        var code: String
        var title: String
    }

    struct PlaceMapper: DomainMapper {
        func model(from entity: Loaded<Airport>) -> Place { Place(code: entity.icao, title: entity.name) }
    }

    @Test("a refresh returns what it stored, in the response's order, and as domain models through a mapper")
    func refreshReturnsStored() async throws {
        try await withSyncServer { server, serverStore in
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(store: store, client: APIClient(baseURL: server.baseURL))
            let stored = try await loader.refresh(Self.norway(.networkFirst))
            let expected = try await serverStore.repository(Airport.self).fetch(
                where: \.country == "NO", orderBy: [.ascending(\.icao)])
            #expect(stored == expected)
            #expect(try await store.repository(Airport.self).count() == expected.count)
            let places = try await loader.refresh(Self.norway(.networkFirst), mappedBy: PlaceMapper())
            #expect(places == expected.map { Place(code: $0.icao, title: $0.name) })
        }
    }

    @Test("a loader working with a sync engine stores what the server sent under the edits waiting to be pushed")
    func loaderKeepsWaitingEdits() async throws {
        try await withSyncServer { server, _ in
            let replica = try Replica(server: server, clock: TestClock())
            try await replica.engine.sync()
            try await replica.airports.update(where: \.icao == "ENGM", set: [.set(\.city, to: "Waiting")])
            let loader = try ResourceLoader(engine: replica.engine)
            let stored = try await loader.refresh(Self.norway(.networkFirst))
            #expect(stored.first { $0.icao == "ENGM" }?.city == "Waiting")
            #expect(try await replica.airports.find("ENGM")?.city == "Waiting")
            #expect(try await replica.engine.pendingChanges().count == 1)  // nothing recorded by the refresh
            try await replica.engine.sync()
            #expect(try await replica.engine.pendingChanges().isEmpty)
        }
    }

    @Test(
        "a refresh whose response is older than a pull that committed meanwhile asks again instead of storing it over the pulled rows"
    )
    func refreshOlderThanAPull() async throws {
        try await withSyncServer { server, _ in
            let transport = HoldingResponseTransport(path: "/airports")
            let replica = try Replica(server: server, clock: TestClock(), transport: transport)
            try await replica.engine.sync()
            let original = try #require(try await replica.airports.find("ENGM")).name
            let loader = try ResourceLoader(engine: replica.engine)
            let refresh = Task { try await loader.refresh(Self.norway(.networkFirst)) }
            await transport.firstResponseReceived()  // it holds ENGM's name as it was
            _ = try await RawPush.patch(server, "ENGM", #"{"name": "Renamed"}"#)
            try await replica.engine.sync()
            #expect(try await replica.airports.find("ENGM")?.name == "Renamed")
            transport.release()
            let stored = try await refresh.value
            #expect(original != "Renamed")
            #expect(stored.first { $0.icao == "ENGM" }?.name == "Renamed")
            #expect(try await replica.airports.find("ENGM")?.name == "Renamed")
            #expect(transport.count == 2)  // the overlapped response was not stored; the second was
        }
    }

    @Test("identical refreshes in flight share one request; a latest-only refresh cancels the one it replaces")
    func sharingAndLatestOnly() async throws {
        try await withSyncServer { server, _ in
            let transport = CountingTransport(holding: true)
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(store: store, client: APIClient(baseURL: server.baseURL, transport: transport))
            let resource = Self.norway(.networkFirst)
            async let one = loader.refresh(resource)
            async let two = loader.refresh(resource)
            while transport.count("/airports") == 0 { try await Task.sleep(for: .milliseconds(2)) }
            try await Task.sleep(for: .milliseconds(100))  // the second caller joins the held request
            transport.release()
            let (a, b) = try await (one, two)
            #expect(a == b)
            #expect(!a.isEmpty)
            #expect(transport.count("/airports") == 1)

            // Type-ahead: "Os" is replaced by "Osl" before it answers.
            let held = CountingTransport(holding: true)
            let searching = ResourceLoader(store: store, client: APIClient(baseURL: server.baseURL, transport: held))
            func search(_ text: String) -> Resource<AirportsAPI.List, AirportRecordMapper> {
                Resource(
                    AirportsAPI.List(search: text, limit: 20), mapper: AirportRecordMapper(), policy: .networkFirst)
            }
            let first = Task { try await searching.refresh(search("Os"), latestOnly: "search") }
            while held.count("/airports") == 0 { try await Task.sleep(for: .milliseconds(2)) }
            let second = Task { try await searching.refresh(search("Osl"), latestOnly: "search") }
            // The second request is sent once it has replaced (cancelled) the first.
            while held.count("/airports") < 2 { try await Task.sleep(for: .milliseconds(2)) }
            held.release()
            await #expect(throws: (any Error).self) { try await first.value }
            #expect(
                try await second.value.allSatisfy {
                    $0.name.lowercased().contains("osl") || ($0.city ?? "").lowercased().contains("osl")
                })
        }
    }
}

extension ResourceLoaderTests {
    static func airport(_ icao: String, _ policy: RefreshPolicy = .cacheFirst)
        -> Resource<AirportsAPI.Get, AirportRecordMapper>
    {
        Resource(one: AirportsAPI.Get(icao: icao), mapper: AirportRecordMapper(), where: \.icao == icao, policy: policy)
    }

    @Test("a one-object resource loads from the endpoint once, then from the store; offline, the stored row stands")
    func oneObjectOfflineFirst() async throws {
        try await withSyncServer { server, serverStore in
            let expected = try #require(
                try await serverStore.repository(Airport.self).first(
                    where: \.country == "NO", orderBy: [.ascending(\.icao)]))
            let transport = CountingTransport()
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(store: store, client: APIClient(baseURL: server.baseURL, transport: transport))
            let path = "/airports/\(expected.icao)"
            #expect(try await loader.load(Self.airport(expected.icao)) == [expected])
            #expect(try await loader.load(Self.airport(expected.icao)) == [expected])
            #expect(transport.count(path) == 1, "cache first: stored once, then read from the store")
            #expect(
                try await loader.load(Self.airport(expected.icao), mappedBy: PlaceMapper()) == [
                    Place(code: expected.icao, title: expected.name)
                ])
            #expect(try await loader.load(Self.airport(expected.icao, .networkFirst)) == [expected])
            #expect(transport.count(path) == 2)
            let missing = await #expect(throws: HTTPError.self) { try await loader.load(Self.airport("ZZZZ")) }
            #expect(missing?.kind == .notFound)
            #expect(try await store.repository(Airport.self).count() == 1, "a failed load stores nothing")

            // Offline: nothing listens on port 1.
            let refused = ResourceLoader(
                store: store, client: APIClient(baseURL: try #require(URL(string: "http://127.0.0.1:1"))))
            #expect(try await refused.load(Self.airport(expected.icao, .networkFirst)) == [expected])
            #expect(try await refused.load(Self.airport(expected.icao, .localOnly)) == [expected])
            let offline = await #expect(throws: HTTPError.self) {
                try await refused.load(Self.airport("ENZZ", .networkFirst))
            }
            #expect(offline?.kind == .connectionFailed, "nothing stored to stand in: the refresh's error")
            #expect(try await refused.refreshState(Self.airport(expected.icao)).error is HTTPError)
        }
    }

    @Test(
        "stale-while-revalidate load: nothing stored waits for the refresh; stored rows come at once, refreshed behind")
    func oneObjectStaleWhileRevalidate() async throws {
        try await withSyncServer { server, serverStore in
            let expected = try #require(try await serverStore.repository(Airport.self).first(where: \.country == "NO"))
            let transport = CountingTransport()
            let clock = TestClock()
            let store = try SQLiteStore.temporary()
            let loader = ResourceLoader(
                store: store, client: APIClient(baseURL: server.baseURL, transport: transport), clock: clock.function)
            let resource = Self.airport(expected.icao, .staleWhileRevalidate(maxAge: .seconds(60)))
            let path = "/airports/\(expected.icao)"
            #expect(try await loader.load(resource) == [expected])
            #expect(try await loader.load(resource) == [expected])
            #expect(transport.count(path) == 1, "fresh: no request")
            // The server renames it; past the age, the stored row comes first, the new one after.
            try await serverStore.repository(Airport.self).update(
                where: \.icao == expected.icao, set: \.name, to: "New")
            clock.advance(120)
            var states = loader.refreshStates(resource).makeAsyncIterator()
            #expect(try await loader.load(resource).map(\.name) == [expected.name])
            // Until the background refresh ends: stored, or failed (then the expectations below fail).
            var last = RefreshState()
            while let state = await states.next() {
                last = state
                if state.lastRefreshed == clock.date() || state.error != nil { break }
            }
            #expect(last.error == nil)
            #expect(transport.count(path) == 2)
            #expect(try await loader.load(resource).map(\.name) == ["New"])
        }
    }
}
