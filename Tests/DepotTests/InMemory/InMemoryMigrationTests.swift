import Depot
import DepotSQL
import DepotTesting
import Testing

@Suite("InMemoryStore migrations")
struct InMemoryMigrationTests {
    @Test(
        "the in-memory store passes the migration suite (raw SQL cases aside)",
        arguments: MigrationConformance.cases.filter { !$0.needsSQL })
    func conformance(_ check: MigrationCase) async throws {
        let store = InMemoryStore()
        #expect(try await store.appliedMigrations().isEmpty)
        // One database in memory: every "other process" is this same store.
        try await check.run { store }
        let versions = try await store.appliedMigrations().map(\.version)
        #expect(versions == Array(versions.indices.map { $0 + 1 }))
    }

    @Test("a raw SQL step fails on the in-memory store, naming the step, and changes nothing")
    func rawSQL() async throws {
        let store = InMemoryStore()
        let steps = Migrations([
            Migration("1 ports", [.createTable(Reading.self)]),
            Migration("2 seed", [.sql(sqlite: "INSERT INTO readings VALUES ('a', 1, 2)", postgres: nil)]),
        ])
        let error = await #expect(throws: DepotError.self) { try await store.migrate(steps) }
        #expect(
            error?.message
                == "step 2 '2 seed' failed; the database stays at version 1: the in-memory store cannot carry out "
                + "'sql sqlite: INSERT INTO readings VALUES ('a', 1, 2) postgres: -' (raw SQL runs on SQL stores)")
        #expect(try await store.appliedMigrations().map(\.name) == ["1 ports"])
    }
}
