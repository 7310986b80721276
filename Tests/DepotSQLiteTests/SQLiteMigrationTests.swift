import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

@Suite("SQLiteStore migrations", .timeLimit(.minutes(10)))
struct SQLiteMigrationTests {
    @Test("SQLite file store passes the migration suite", arguments: MigrationConformance.cases)
    func conformance(_ check: MigrationCase) async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(try await SQLiteStore(path: path).appliedMigrations().isEmpty, "each case starts on a new database")
        try await check.run { try SQLiteStore(path: path) }
        // Whatever the case did, another instance reads back a ledger numbered 1…n without gaps.
        let versions = try await SQLiteStore(path: path).appliedMigrations().map(\.version)
        #expect(versions == Array(versions.indices.map { $0 + 1 }))
    }

    @Test("a process killed inside a step leaves the database at the step before; a new run finishes")
    func killedMidStep() async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let first = try await MigrationProbe.run(["--store", path, "--to", "1"])
        #expect(first.status == 0, "\(first.output)")
        let printed = try await MigrationProbe.killInsideStep(["--store", path])
        #expect(printed.contains("in step 2"), "the probe was killed inside step 2: \(printed)")
        try await MigrationProbe.expectKilledAtVersionOne(try SQLiteStore(path: path), rerun: ["--store", path])
        let items = try await SQLiteStore(path: path).repository(DoubledProbeItem.self).fetchAll()
        #expect(items.allSatisfy { $0.doubled == 2 * $0.value } && items.count == 1000)
    }
}
