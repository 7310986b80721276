import Depot
import DepotTesting
import Testing

@Suite("LiveQuery", .timeLimit(.minutes(10)))
@MainActor
struct LiveQueryTests {
    @Test("a live query holds the current results and follows commits; stopped, it keeps its last results")
    func followsCommits() async throws {
        let store = InMemoryStore()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        let live = LiveQuery(airports, where: \.country == "DE", orderBy: [.descending(\.elevation)])
        try await observed { live.isLoaded }
        #expect(live.results.map(\.icao) == ["EDDM", "EDXS"])
        try await airports.upsert(TestAirport(icao: "EDDF", name: "Frankfurt", country: "DE", elevation: 364))
        try await observed { live.results.count == 3 }
        #expect(live.results.map(\.icao) == ["EDDM", "EDDF", "EDXS"])
        live.stop()
        try await airports.remove("EDDF")
        // Another live query of the same rows has seen the removal: the stopped one has not.
        let after = LiveQuery(airports, where: \.country == "DE", orderBy: [.descending(\.elevation)])
        try await observed { after.isLoaded }
        #expect(after.results.count == 2)
        #expect(live.results.count == 3)
    }

    @Test("a live query starts observing when first read, not when made (a dropped @State value costs nothing)")
    func startsWhenRead() async throws {
        let store = InMemoryStore()
        let airports = store.repository(TestAirport.self)
        let unread = LiveQuery(airports)
        let live = LiveQuery(airports, where: \.country == "DE")
        #expect(!unread.hasStarted && !live.hasStarted)
        try await airports.insert(TestAirport.sample)
        #expect(!live.hasStarted)
        #expect(live.results.isEmpty)  // the first read starts it
        #expect(live.hasStarted)
        try await observed { live.isLoaded }
        #expect(live.results.map(\.icao).sorted() == ["EDDM", "EDXS"])
        #expect(!unread.hasStarted)
    }

    @Test("an observation that fails keeps its error")
    func keepsTheError() async throws {
        let live = LiveQuery(InMemoryStore().repository(TwiceNamed.self))
        try await observed { live.error != nil }
        #expect(live.results.isEmpty && !live.isLoaded)
        #expect("\(live.error.map { "\($0)" } ?? "")".contains("name"))
    }
}

/// An entity whose schema names one column twice: every query of it fails.
private struct TwiceNamed: Entity {
    var id: Int
    var name: String
    static let schema = Schema<TwiceNamed>("twice_named", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "id")
    }
}
