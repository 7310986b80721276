import Depot
import DepotPostgres
import DepotTestSupport
import Testing

@Suite(
    "PostgreSQL store soak", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct PostgresSoakTests {
    @Test(
        "8 writers moving money, 8 readers summing and 2 observers at once on a server store: no torn total, no lost transfer, no error, observers end on the final state"
    )
    func soak() async throws {
        try await HeavyHarness.run {
            try await PostgresTestServer.withStore { store in
                let report = try await SoakChecks.run(on: store)
                print("PostgreSQL soak: \(report)")
                #expect(report.transfers == 8 * SoakChecks.transfersPerWriter && report.observed > 0, "\(report)")
            }
        }
    }
}
