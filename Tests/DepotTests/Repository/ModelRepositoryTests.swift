import Depot
import DepotTesting
import Synchronization
import Testing

/// What a screen shows of an airport.
struct Place: Sendable, Equatable {
    var code: String
    var name: String
}

struct PlaceMapper: DomainMapper {
    func model(from airport: Loaded<TestAirport>) -> Place { Place(code: airport.icao, name: airport.name) }
}

struct PlaceNameMapper: UpdateMapper {
    var match: Match<Place, TestAirport> { Match(\.code, \.icao) }
    func makeEntity(from place: Place) -> TestAirport { TestAirport(icao: place.code, name: place.name, country: "NO") }
    func update(_ airport: inout TestAirport, from place: Place) { airport.name = place.name }
}

/// App code: depends on the protocol only.
struct PlaceDirectory {
    enum Screen: Equatable {
        case places([Place])
        case failed(String)
    }
    let places: any ModelRepository<Place, TestAirport>

    func refresh(with fresh: [Place]) async -> Screen {
        do {
            try await places.persist(fresh, mapper: PlaceNameMapper())
            return .places(try await places.fetch(where: \.country == "NO", orderBy: [.ascending(\.icao)]))
        } catch {
            return .failed("\(error)")
        }
    }
}

struct Offline: Error, CustomStringConvertible {
    var description: String { "offline" }
}

/// A fake that records the queries it gets, answers from a list and fails writes on demand.
final class FakePlaces: ModelRepository, Sendable {
    typealias Model = Place
    typealias Stored = TestAirport
    let stored: [Place]
    let failWrites: Bool
    let calls = Mutex<[String]>([])
    let results: ModelObservation<Place>

    init(_ stored: [Place], failWrites: Bool = false, results: ModelObservation<Place>? = nil) {
        self.stored = stored
        self.failWrites = failWrites
        self.results = results ?? ModelObservation(AsyncThrowingStream { $0.finish() })
    }

    private func record(_ call: String, _ query: Query<TestAirport>? = nil) {
        let page = query.map {
            " limit \($0.limit.map(String.init) ?? "-") offset \($0.offset.map(String.init) ?? "-")"
        }
        calls.withLock { $0.append(call + (page ?? "")) }
    }

    func fetch(_ query: Query<TestAirport>) async throws -> [Place] {
        record("fetch", query)
        return Array(stored.prefix(query.limit ?? stored.count))
    }
    func find<Key: StorableValue>(_ key: Key) async throws -> Place? {
        record("find")
        return stored.first { "\($0.code)" == "\(key)" }
    }
    func count(_ query: Query<TestAirport>) async throws -> Int {
        record("count", query)
        return min(stored.count, query.limit ?? .max)
    }
    func persist<Persist: UpdateMapper>(_ sources: some Sequence<Persist.Source>, mapper: Persist) async throws
        -> [Place] where Persist.Target == TestAirport
    {
        record("persist \(Array(sources).count)")
        if failWrites { throw Offline() }
        return stored
    }
    func persist<Persist: PersistMapper>(_ sources: some Sequence<Persist.Source>, mapper: Persist) async throws
        -> [Place] where Persist.Target == TestAirport
    {
        record("persist \(Array(sources).count)")
        if failWrites { throw Offline() }
        return stored
    }
    func remove(_ query: Query<TestAirport>) async throws -> Int {
        record("remove", query)
        return stored.count
    }
    func remove<Key: StorableValue>(_ key: Key) async throws -> Bool {
        record("remove key")
        return true
    }
    func observe(_ query: Query<TestAirport>, timing: ObservationTiming) -> ModelObservation<Place> {
        record("observe", query)
        return results
    }
}

@Suite("ModelRepository")
struct ModelRepositoryTests {
    let oslo = Place(code: "ENGM", name: "Oslo Gardermoen")

    @Test("app code written against the protocol runs on a mapped repository and on a fake alike")
    func sameCodeBothWays() async throws {
        let store = InMemoryStore()
        let live = PlaceDirectory(places: store.repository(TestAirport.self).mapped(by: PlaceMapper()))
        #expect(await live.refresh(with: [oslo]) == .places([oslo]))
        #expect(
            await live.refresh(with: [Place(code: "ENGM", name: "Gardermoen")])
                == .places([
                    Place(code: "ENGM", name: "Gardermoen")
                ]))
        #expect(try await store.repository(TestAirport.self).count() == 1)

        let fake = FakePlaces([oslo])
        #expect(await PlaceDirectory(places: fake).refresh(with: [oslo]) == .places([oslo]))
        #expect(fake.calls.withLock { $0 } == ["persist 1", "fetch limit - offset -"])
    }

    @Test("a fake's failing write reaches the app's error path, and the app reads nothing after it")
    func fakeFailure() async {
        let fake = FakePlaces([oslo], failWrites: true)
        #expect(await PlaceDirectory(places: fake).refresh(with: [oslo]) == .failed("offline"))
        #expect(fake.calls.withLock { $0 } == ["persist 1"])
    }

    @Test("first and exists ask the fake for a one-row page; removeAll removes through an empty query")
    func defaultsBuiltOnRequirements() async throws {
        let fake = FakePlaces([oslo, Place(code: "ENBR", name: "Bergen")])
        let places: any ModelRepository<Place, TestAirport> = fake
        #expect(try await places.first(where: \.country == "NO") == oslo)
        #expect(try await places.exists(Query(limit: 5, offset: 2)))
        #expect(try await places.first(Query(limit: 0)) == nil)
        #expect(try await places.removeAll() == 2)
        #expect(try await places.remove(where: \.icao == "ENGM") == 2)
        #expect(
            fake.calls.withLock { $0 } == [
                "fetch limit 1 offset -", "count limit 1 offset 2", "fetch limit 0 offset -",
                "remove limit - offset -", "remove limit - offset -",
            ])
    }

    @Test("a model observation emits what the stream it wraps emits, in order, then that stream's error")
    func observationOfAStream() async throws {
        let (results, continuation) = AsyncThrowingStream.makeStream(of: [Place].self)
        let fake = FakePlaces([], results: ModelObservation(results))
        let places: any ModelRepository<Place, TestAirport> = fake
        var lists = places.observe(where: \.country == "NO").makeAsyncIterator()
        continuation.yield([oslo])
        continuation.yield([])
        continuation.finish(throwing: Offline())
        #expect(try await lists.next() == [oslo])
        #expect(try await lists.next() == [])
        await #expect(throws: Offline.self) { try await lists.next() }
        #expect(try await lists.next() == nil)
        #expect(fake.calls.withLock { $0 } == ["observe limit - offset -"])
    }

    @Test("a mapped repository's observation through the protocol ends with nil when its task is cancelled")
    func mappedObservationCancels() async throws {
        let store = InMemoryStore()
        let places: any ModelRepository<Place, TestAirport> = store.repository(TestAirport.self).mapped(
            by: PlaceMapper())
        try await places.persist([oslo], mapper: PlaceNameMapper())
        let task = Task {
            var count = 0
            for try await _ in places.observe(Query()) {
                count += 1
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return count
        }
        #expect(try await task.value == 1)
    }
}
