import Depot
import DepotSQLite
import DepotTestSupport
import Testing

@Suite("SQLite store soak", .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct SQLiteSoakTests {
    @Test(
        "8 writers moving money, 8 readers summing and 2 observers at once on a file store: no torn total, no lost transfer, no \"database is locked\", observers end on the final state"
    )
    func soak() async throws {
        try await HeavyHarness.run {
            let report = try await SoakChecks.run(on: try SQLiteStore.temporary())
            print("SQLite soak: \(report)")
            #expect(report.transfers == 8 * SoakChecks.transfersPerWriter && report.observed > 0, "\(report)")
        }
    }
}
