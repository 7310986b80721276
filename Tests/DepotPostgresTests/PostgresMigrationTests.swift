import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Synchronization
import Testing

@Suite(
    "PostgresStore migrations", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
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

    @Test("a process killed inside a step leaves the schema at the step before; a new run finishes")
    func killedMidStep() async throws {
        let url = try PostgresEnvironment.scratchURL()
        let store = try PostgresStore(url: url)
        try await withCleanup { () async throws in
            let first = try await MigrationProbe.run(["--postgres", url, "--to", "1"])
            #expect(first.status == 0, "\(first.output)")
            let printed = try await MigrationProbe.killInsideStep(["--postgres", url])
            #expect(printed.contains("in step 2"), "the probe was killed inside step 2: \(printed)")
            // The server ends the killed session's transaction when it notices the closed socket.
            try await MigrationProbe.expectKilledAtVersionOne(store, rerun: ["--postgres", url])
            let items = try await store.repository(DoubledProbeItem.self).fetchAll()
            #expect(items.allSatisfy { $0.doubled == 2 * $0.value } && items.count == 1000)
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }

    @Test("processes opening one schema with applyAdditiveChanges at once all start; the column is added once")
    func concurrentAdditiveOpens() async throws {
        for _ in 0..<3 {
            let url = try PostgresEnvironment.scratchURL()
            let store = try PostgresStore(url: url)
            try await withCleanup { () async throws in
                let first = try await MigrationProbe.run(["--postgres", url, "--to", "1"])
                #expect(first.status == 0, "\(first.output)")
                try await MigrationProbe.expectConcurrentAdditiveOpens(store, ["--postgres", url])
            } cleanup: {
                try? await store.dropSchema()
                await store.close()
            }
        }
    }
}
