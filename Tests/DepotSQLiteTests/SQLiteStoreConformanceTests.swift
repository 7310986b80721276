import Depot
import DepotSQLite
import DepotTesting
import Testing

@Suite("SQLiteStore conformance", .timeLimit(.minutes(10)))
struct SQLiteStoreConformanceTests {
    @Test("SQLite file store passes", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        let store = try SQLiteStore.temporary()
        #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
        try await check.run(on: store)
    }
}
