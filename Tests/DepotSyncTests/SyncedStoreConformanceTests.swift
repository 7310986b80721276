import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Testing

@testable import DepotSync

/// The store an app writes through when it syncs answers as any store does: the conformance
/// suite on a ``SyncedStore`` over a SQLite file, with every table the suite writes synced (so
/// every write goes through the outbox's capture).
@Suite("SyncedStore conformance", .timeLimit(.minutes(10)))
struct SyncedStoreConformanceTests {
    /// Every table the conformance cases write.
    static let synced: Set<String> = [
        "airports", "all_types", "broken", "conformance_gadgets", "conformance_samples", "found", "keyed_dates",
        "keyed_decimals", "keyed_doubles", "keyed_pairs", "keyed_uuids", "map_comments", "map_images", "map_posts",
        "map_tags", "map_users", "members", "observed_kinds", "orders", "people", "ports", "readings",
        "rel_airports", "rel_alliances", "rel_countries", "rel_employees", "rel_memberships", "rel_mistyped",
        "rel_orphans", "rel_pilots", "rel_runways", "searched", "test_accounts", "uncovered", "users",
    ]

    /// The search cases' search indexes, made on the base store.
    static let searchMigrations = Migrations([
        Migration("1 airports", [.createTable(TestAirport.self)]),
        Migration(
            "2 search", [.createSearchIndex(TestAirport.self, \.name), .createSearchIndex(TestAirport.self, \.city)]),
    ])

    @Test("a synced SQLite store passes, every write recorded in the outbox", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        let base = try SQLiteStore.temporary()
        // The search cases migrate a store they can (a synced store's migrations are its base's).
        try await base.migrate(Self.searchMigrations)
        let store = SyncedStore(base: base, synced: Self.synced, clock: { .now })
        #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
        try await check.run(on: store)
    }
}

@Suite("SyncedStore conformance, in memory", .timeLimit(.minutes(10)))
struct SyncedInMemoryStoreConformanceTests {
    @Test("a synced in-memory store passes, every write recorded in the outbox", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        let store = SyncedStore(base: InMemoryStore(), synced: SyncedStoreConformanceTests.synced, clock: { .now })
        #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
        try await check.run(on: store)
    }
}

@Suite(
    "SyncedStore conformance, over PostgreSQL",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"), .timeLimit(.minutes(10)))
struct SyncedPostgresStoreConformanceTests {
    @Test("a synced PostgreSQL store passes, every write recorded in the outbox", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        var configuration = try PostgresStore.Configuration(url: try PostgresEnvironment.requireURL())
        configuration.schema = PostgresEnvironment.scratchSchemaName()
        configuration.maximumConnections = 4
        let base = PostgresStore(configuration: configuration)
        try await withCleanup {
            try await base.migrate(SyncedStoreConformanceTests.searchMigrations)
            let store = SyncedStore(base: base, synced: SyncedStoreConformanceTests.synced, clock: { .now })
            #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
            // Bounded: a case that ignores its time limit's cancellation fails, naming itself.
            try await Deadline.run("the conformance case '\(check.name)'", limit: .seconds(300)) {
                try await check.run(on: store)
            }
        } cleanup: {
            try? await base.dropSchema()
            await base.close()
        }
    }
}
