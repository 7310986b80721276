import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Testing

@Suite(
    "PostgresStore conformance behind PgBouncer (transaction mode)", .serialized,
    .enabled(if: PostgresEnvironment.isBouncerConfigured, "DEPOT_PGBOUNCER_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresPooledConformanceTests {
    @Test(
        "PostgreSQL store behind a transaction-mode pooler passes, observing through listenerURL",
        arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        try await PostgresTestServer.withPooledStore { store in
            #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
            try await Deadline.run("the pooled conformance case '\(check.name)'", limit: .seconds(300)) {
                try await check.run(on: store)
            }
        }
    }
}
