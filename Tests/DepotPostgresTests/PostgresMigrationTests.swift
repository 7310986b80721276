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

    @Test(
        "a migration holding its schema's lock keeps another store of that schema waiting, never a store of another schema"
    )
    func migrationLockIsPerSchema() async throws {
        let schema = PostgresEnvironment.scratchSchemaName()
        let base = try PostgresEnvironment.requireURL()
        let url = base + (base.contains("?") ? "&" : "?") + "schema=" + schema
        let holder = try PostgresStore(url: url)
        let sameSchema = try PostgresStore(url: url)
        let otherSchema = try PostgresStore(url: try PostgresEnvironment.scratchURL())
        let migrations = Migrations([Migration("1 rows", [.createTable(FaultRow.self)])])
        try await withCleanup { () async throws in
            // The holder takes its schema's migration lock, as a migration does, and keeps it.
            let (locked, lockTaken) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseLock) = AsyncStream.makeStream(of: Void.self)
            let holding = Task {
                defer { lockTaken.finish() }  // a holder that failed ends the wait below
                try await holder.write { tx in
                    _ = try await tx.sql(
                        "SELECT pg_advisory_xact_lock(74118002, hashtext(coalesce(current_schema(), '')))::text")
                    lockTaken.yield()
                    for await _ in release { break }
                }
            }
            var holds = false
            for await _ in locked {
                holds = true
                break
            }
            guard holds else {
                try await holding.value  // its error
                Issue.record("the holder ended without taking the lock")
                return
            }
            // Another schema of the same database migrates and creates its tables meanwhile.
            try await otherSchema.migrate(migrations)
            try await otherSchema.repository(FaultRow.self).insert(FaultRow(id: 1, note: "other schema"))
            #expect(try await otherSchema.appliedMigrations().map(\.name) == ["1 rows"])
            // The same schema waits: its migration asks for the lock the holder keeps.
            let waiting = Task { _ = try await sameSchema.migrate(migrations) }
            while try await Self.migrationLockWaiters(schema, asking: otherSchema) == 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
            releaseLock.yield()
            try await holding.value
            try await waiting.value
            #expect(try await sameSchema.appliedMigrations().map(\.name) == ["1 rows"])
        } cleanup: {
            try? await holder.dropSchema()
            try? await otherSchema.dropSchema()
            await holder.close()
            await sameSchema.close()
            await otherSchema.close()
        }
    }

    /// Sessions waiting for the migration lock of `schema`, counted through `store` (a store whose
    /// writer is free: `sql` runs as a write). Two-key advisory locks keep the first key in
    /// `classid`, the second in `objid`.
    private static func migrationLockWaiters(_ schema: String, asking store: PostgresStore) async throws -> Int {
        let rows = try await store.sql(
            """
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2
            AND classid = 74118002 AND objid = hashtext(\(schema))::oid
            """)
        guard case .integer(let count) = rows.rows.first?.first else { return 0 }
        return Int(count)
    }
}
