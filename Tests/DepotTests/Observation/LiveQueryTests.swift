import Depot
import DepotTesting
import Testing

@MainActor
func waitUntil(_ condition: @MainActor () -> Bool) async -> Bool {
    // Time-based and generous (20 s): a loaded 2-core CI machine has stalled the pool for seconds.
    let end = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < end {
        if condition() { return true }
        do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
    }
    return condition()
}

@Suite("LiveQuery", .timeLimit(.minutes(10)))
@MainActor
struct LiveQueryTests {
    @Test("a live query holds the current results and follows commits")
    func followsCommits() async throws {
        let store = InMemoryStore()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        let live = LiveQuery(airports, where: \.country == "DE", orderBy: [.descending(\.elevation)])
        #expect(await waitUntil { live.isLoaded })
        #expect(live.results.map(\.icao) == ["EDDM", "EDXS"])
        try await airports.upsert(TestAirport(icao: "EDDF", name: "Frankfurt", country: "DE", elevation: 364))
        #expect(await waitUntil { live.results.count == 3 })
        #expect(live.results.map(\.icao) == ["EDDM", "EDDF", "EDXS"])
        live.stop()
        try await airports.remove("EDDF")
        try await Task.sleep(for: .milliseconds(50))
        #expect(live.results.count == 3)
    }
}
