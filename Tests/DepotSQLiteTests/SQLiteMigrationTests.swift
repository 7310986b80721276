import Depot
import DepotSQL
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import GRDB
import Testing

@Suite("SQLiteStore migrations", .timeLimit(.minutes(10)))
struct SQLiteMigrationTests {
    @Test("SQLite file store passes the migration suite", arguments: MigrationConformance.cases)
    func conformance(_ check: MigrationCase) async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        #expect(try await SQLiteStore(path: path).appliedMigrations().isEmpty, "each case starts on a new database")
        // A minute's busy wait: cases open several stores at once, and a loaded 2-core CI run has
        // kept one waiting past the default 10 s.
        try await check.run { try SQLiteStore(path: path, busyTimeout: .seconds(60)) }
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

    @Test("processes opening one file with applyAdditiveChanges at once all start; the column is added once")
    func concurrentAdditiveOpens() async throws {
        for _ in 0..<3 {
            let folder = try scratchDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("store.sqlite").path
            let first = try await MigrationProbe.run(["--store", path, "--to", "1"])
            #expect(first.status == 0, "\(first.output)")
            try await MigrationProbe.expectConcurrentAdditiveOpens(try SQLiteStore(path: path), ["--store", path])
        }
    }

    @Test("three processes on one new file migrate once between them, and each observer sees the others' writes")
    func instancesSeeEachOther() async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        try await MigrationProbe.expectInstancesSeeEachOther(["--store", path])
        #expect(try await SQLiteStore(path: path).appliedMigrations().map(\.version) == [1, 2])
        #expect(try await SQLiteStore(path: path).repository(DoubledProbeItem.self).count() == 1000 + 3 + 300)
    }

    /// Tables made by a raw SQL step with what SQLite's rebuild used to lose: `UNIQUE`, `CHECK`,
    /// `COLLATE`, a `DEFAULT` on the column that changes, an index, a trigger, a view, and children
    /// that cascade or set NULL when a parent row is deleted.
    static let richTables = Migration(
        "1 tables by hand",
        [
            .sql(
                sqlite: """
                    CREATE TABLE parents (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE COLLATE NOCASE,
                      size TEXT DEFAULT '7' CHECK (size <> 'bad'), -- a comment, with a comma
                      note TEXT NOT NULL ON CONFLICT ABORT DEFAULT 'none');
                    CREATE INDEX parents_note ON parents (note);
                    CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents(id) ON DELETE CASCADE);
                    CREATE TABLE orphans (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents(id) ON DELETE SET NULL);
                    CREATE TABLE log (entry TEXT);
                    CREATE TRIGGER parents_log AFTER INSERT ON parents BEGIN INSERT INTO log VALUES (NEW.code); END;
                    CREATE VIEW parent_codes AS SELECT code FROM parents;
                    INSERT INTO parents (id, code, size) VALUES (1, 'a', '10'), (2, 'b', '20');
                    INSERT INTO children VALUES (1, 1), (2, 2);
                    INSERT INTO orphans VALUES (1, 1);
                    """)
        ])

    @Test("changing a column's type deletes nothing in other tables and keeps every clause, index, trigger and view")
    func rebuildKeepsEverything() async throws {
        let store = try SQLiteStore.temporary()
        let path = store.path
        try await store.migrate(
            Migrations([
                Self.richTables,
                Migration("2 size is a number", [.alterColumn("size", to: .integer, nullable: true, in: "parents")]),
                Migration("3 note may be NULL", [.alterColumn("note", to: .text, nullable: true, in: "parents")]),
            ]))
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            // Nothing cascaded or was set NULL in the children.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM children") == 2)
            #expect(try Int.fetchOne(db, sql: "SELECT parent FROM orphans WHERE id = 1") == 1)
            // The column changed, its DEFAULT and CHECK stayed.
            #expect(try String.fetchOne(db, sql: "SELECT typeof(size) FROM parents WHERE id = 1") == "integer")
            try db.execute(sql: "INSERT INTO parents (id, code) VALUES (3, 'c')")
            #expect(try Int.fetchOne(db, sql: "SELECT size FROM parents WHERE id = 3") == 7)
            #expect(throws: (any Error).self) {
                try db.execute(sql: "INSERT INTO parents (id, code, size) VALUES (4, 'd', 'bad')")
            }
            // UNIQUE with COLLATE NOCASE stayed: 'A' is taken by 'a'.
            #expect(throws: (any Error).self) { try db.execute(sql: "INSERT INTO parents (id, code) VALUES (5, 'A')") }
            // note lost NOT NULL (and its ON CONFLICT clause), kept its DEFAULT.
            try db.execute(sql: "INSERT INTO parents (id, code, note) VALUES (6, 'f', NULL)")
            try db.execute(sql: "INSERT INTO parents (id, code) VALUES (7, 'g')")
            #expect(try String.fetchOne(db, sql: "SELECT note FROM parents WHERE id = 7") == "none")
            // The index, the trigger and the view are there and work.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE name = 'parents_note'") == 1)
            #expect(try String.fetchAll(db, sql: "SELECT entry FROM log ORDER BY rowid") == ["a", "b", "c", "f", "g"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM parent_codes") == 5)
            // Foreign keys hold and are enforced again.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_foreign_key_check") == 0)
            #expect(throws: (any Error).self) { try db.execute(sql: "INSERT INTO children VALUES (9, 99)") }
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
        }
        // The store's own writer connection enforces foreign keys again after the step.
        let error = await #expect(throws: DepotError.self) {
            try await store.migrate(
                Migrations([
                    Self.richTables,
                    Migration(
                        "2 size is a number", [.alterColumn("size", to: .integer, nullable: true, in: "parents")]),
                    Migration("3 note may be NULL", [.alterColumn("note", to: .text, nullable: true, in: "parents")]),
                    Migration("4 an orphan", [.sql(sqlite: "INSERT INTO children VALUES (10, 99)")]),
                ]))
        }
        #expect(error?.message.lowercased().contains("foreign key") == true, "\(String(describing: error))")
        #expect(try await store.appliedMigrations().count == 3)
    }

    @Test("a type change that leaves a reference dangling fails the step and changes nothing")
    func rebuildRefusesDanglingReferences() async throws {
        let store = try SQLiteStore.temporary()
        let path = store.path
        try await store.migrate(Migrations([Self.richTables]))
        // With foreign keys suspended for the rebuild, a delete in the same step cascades nowhere:
        // child 2 would be left pointing at nothing, so the step must fail as a whole.
        let error = await #expect(throws: DepotError.self) {
            try await store.migrate(
                Migrations([
                    Self.richTables,
                    Migration(
                        "2 drop a parent by hand, then rebuild",
                        [
                            .sql(sqlite: "DELETE FROM parents WHERE id = 2"),
                            .alterColumn("size", to: .integer, nullable: true, in: "parents"),
                        ]),
                ]))
        }
        #expect(error?.kind == .migration)
        #expect(error?.message.contains("foreign key") == true)
        let queue = try DatabaseQueue(path: path)
        try await queue.read { (db: Database) throws -> Void in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM parents") == 2)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM children") == 2)
            #expect(try String.fetchOne(db, sql: "SELECT typeof(size) FROM parents WHERE id = 1") == "text")
        }
        #expect(try await store.appliedMigrations().count == 1)
    }
}
