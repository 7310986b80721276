import Depot
import Foundation
import Testing

@Suite("README: quick start")
struct QuickStartTests {
    @Test("the quick start compiles and runs on the in-memory store")
    func quickStartRuns() async throws {
        let store = InMemoryStore()
        // In this module the relations sample gives `Airport` a to-one relation to `Country`.
        try await store.repository(Country.self).insert(Country(code: "NO", name: "Norway", continent: "EU"))
        try await quickStart(store: store)
        let airports = try await store.repository(Airport.self).fetchAll()
        #expect(airports.map(\.icao) == ["ENGM"])
    }
}
