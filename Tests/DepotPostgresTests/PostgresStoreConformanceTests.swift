import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Testing

@Suite(
    "PostgresStore conformance", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresStoreConformanceTests {
    @Test("PostgreSQL store passes", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        try await PostgresTestServer.withStore { store in
            #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
            // Bounded: a case that ignores its time limit's cancellation fails, naming itself,
            // instead of holding the whole test run.
            try await Deadline.run("the conformance case '\(check.name)'", limit: .seconds(300)) {
                try await check.run(on: store)
            }
        }
    }
}
