import Depot
import DepotPostgres
import DepotTestSupport
import Testing

/// App instances as separate processes on one PostgreSQL database (`depot-migration-probe
/// --instance`): started at once, they migrate, write and observe each other.
@Suite(
    "PostgreSQL: many app instances on one database",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresMultiInstanceTests {
    @Test("three processes started at once migrate once between them, and each observer sees the others' writes")
    func direct() async throws {
        let url = try PostgresEnvironment.scratchURL()
        let store = try PostgresStore(url: url)
        try await withCleanup {
            try await MigrationProbe.expectInstancesSeeEachOther(["--postgres", url])
            #expect(try await store.appliedMigrations().map(\.version) == [1, 2])
            #expect(try await store.repository(DoubledProbeItem.self).count() == 1000 + 3 + 300)
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }

    @Test(
        "three processes behind PgBouncer in transaction mode, listening directly, migrate once and observe each other",
        .enabled(if: PostgresEnvironment.isBouncerConfigured))
    func behindPooler() async throws {
        try await PostgresTestServer.withPooledDatabase { pooled, direct in
            try await MigrationProbe.expectInstancesSeeEachOther(["--postgres", pooled, "--listener", direct])
            let store = try PostgresStore(url: direct)
            try await withCleanup { () async throws in
                #expect(try await store.appliedMigrations().map(\.version) == [1, 2])
                #expect(try await store.repository(DoubledProbeItem.self).count() == 1000 + 3 + 300)
            } cleanup: {
                await store.close()
            }
        }
    }
}
