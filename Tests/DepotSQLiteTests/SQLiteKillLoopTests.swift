import DepotTestSupport
import Foundation
import GRDB
import Testing

/// The kill loop on SQLite files: `depot-kill-probe` killed with SIGKILL at random moments inside
/// writes and migration steps; each time a fresh process reopens the file and checks it.
@Suite("SQLite kill loop", .serialized, .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct SQLiteKillLoopTests {
    @Test(
        "a SQLite file killed at random moments holds every transaction wholly or not at all, and takes writes",
        arguments: KillLoop.scenarios)
    func killLoop(_ scenario: String) async throws {
        try await HeavyHarness.run {
            let folder = try scratchDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let migration = scenario.hasPrefix("migrate")
            let report = try await KillLoop.run(scenario) { kill in
                // A migration scenario starts each kill on a new file; writes go on in one file.
                let name = migration ? "store-\(kill + 1).sqlite" : "store.sqlite"
                return ["--store", folder.appendingPathComponent(name).path]
            }
            print("SQLite kill loop, \(report)")
            #expect(report.kills == KillLoop.kills)
        }
    }
}

@Suite("The kill loop's checker")
struct KillLoopCheckerTests {
    @Test(
        "the check fails, naming what is wrong, on a torn transaction, a field a patch must not touch and a dangling child",
        arguments: [
            ("upserts", "UPDATE kp_rows SET generation = generation + 1 WHERE id = 5", "generations"),
            ("partial", "UPDATE kp_rows SET untouched = 0 WHERE id = 9", "a field no write assigns changed"),
            ("replace", "DELETE FROM kp_rows WHERE id IN (SELECT id FROM kp_rows LIMIT 1)", "rows, checksum"),
            // Depot enforces relations itself (no REFERENCES clause): the checker looks for orphans.
            (
                "graph", "DELETE FROM kp_parents WHERE id IN (SELECT id FROM kp_parents LIMIT 1)",
                "parents that are not stored"
            ),
        ])
    func checkerCatchesDamage(_ scenario: String, damage: String, named: String) async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let written = try await KillLoop.write(scenario, ["--store", path], for: 0.3)
        #expect(written.contains("committed"), "the probe wrote before it was killed: \(written)")
        let clean = try await KillLoop.check(scenario, ["--store", path])
        #expect(clean.status == 0, "\(clean.output)")
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { db in try db.execute(sql: damage) }
        try queue.close()
        let damaged = try await KillLoop.check(scenario, ["--store", path])
        #expect(damaged.status == 1)
        #expect(damaged.output.contains("violation") && damaged.output.contains(named), "\(damaged.output)")
    }
}
