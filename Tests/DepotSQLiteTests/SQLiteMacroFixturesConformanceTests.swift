import Depot
import DepotSQLite
import DepotTestingMacro
import Testing

@Suite("SQLiteStore conformance, @Entity fixtures", .timeLimit(.minutes(10)))
struct SQLiteMacroFixturesConformanceTests {
    @Test("SQLite file store passes with fixtures declared by @Entity", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        let store = try SQLiteStore.temporary()
        #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
        try await check.run(on: store)
    }
}
