import Depot
import DepotSQLite
import DepotTesting
import Testing

@Suite("SQLiteStore conformance")
struct SQLiteStoreConformanceTests {
    @Test("SQLite file store passes", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        try await check.run(on: try SQLiteStore.temporary())
    }
}
