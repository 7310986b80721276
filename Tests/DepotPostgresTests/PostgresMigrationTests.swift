import Depot
import DepotPostgres
import DepotTesting
import Synchronization
import Testing

@Suite(
    "PostgresStore migrations", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(3)))
struct PostgresMigrationTests {
    @Test("PostgreSQL store passes the migration suite", arguments: MigrationConformance.cases)
    func conformance(_ check: MigrationCase) async throws {
        try await PostgresTestServer.withStore { store in
            #expect(try await store.appliedMigrations().isEmpty, "each case starts on a new schema")
            let opened = Mutex<[PostgresStore]>([])
            try await withCleanup {
                let configuration = store.configuration
                let claimed = Mutex(false)
                try await check.run {
                    // The first call is the store under test; later ones open the same schema anew.
                    if !claimed.withLock({
                        let was = $0; $0 = true; return was
                    }) {
                        return store
                    }
                    let other = PostgresStore(configuration: configuration)
                    opened.withLock { $0.append(other) }
                    return other
                }
                // Whatever the case did, the ledger is numbered 1…n without gaps.
                let versions = try await store.appliedMigrations().map(\.version)
                #expect(versions == Array(versions.indices.map { $0 + 1 }))
            } cleanup: {
                for other in opened.withLock({ $0 }) { await other.close() }
            }
        }
    }
}
