import Depot
import DepotSQL
import Foundation
import Testing

/// The exact SQL migrations send, per dialect: schema changes, defaults, value checks, the ledger,
/// PostgreSQL's column changes in place and SQLite's table rebuild.
@Suite("Migration statements golden SQL")
struct MigrationSQLGoldenTests {
    let sqlite = SQLRenderer(dialect: .sqlite)
    let postgres = SQLRenderer(dialect: .postgres)
    typealias Column = TableDescription.ColumnDescription

    @Test("tables and columns are dropped, renamed and erased by quoted name; erase cascades on PostgreSQL")
    func schemaChanges() {
        for renderer in [sqlite, postgres] {
            #expect(renderer.dropTable("a\"b") == "DROP TABLE \"a\"\"b\"")
            #expect(renderer.renameTable("ports", to: "fields") == "ALTER TABLE \"ports\" RENAME TO \"fields\"")
            #expect(renderer.dropColumn("note", from: "ports") == "ALTER TABLE \"ports\" DROP COLUMN \"note\"")
            #expect(
                renderer.renameColumn("mail", to: "email", in: "users")
                    == "ALTER TABLE \"users\" RENAME COLUMN \"mail\" TO \"email\"")
            #expect(renderer.dropIndex("ports_name") == "DROP INDEX \"ports_name\"")
            #expect(renderer.dropFunction("f(text)") == "DROP FUNCTION IF EXISTS f(text)")
        }
        #expect(sqlite.eraseTable("ports") == "DROP TABLE IF EXISTS \"ports\"")
        #expect(postgres.eraseTable("ports") == "DROP TABLE IF EXISTS \"ports\" CASCADE")
    }

    @Test("an added column's default is a literal of the dialect: booleans, decimals and text differ")
    func addColumn() throws {
        let flag = Column(name: "open", type: .bool, isNullable: false)
        #expect(
            try sqlite.addColumn(flag, to: "ports", default: .bool(true))
                == "ALTER TABLE \"ports\" ADD COLUMN \"open\" BOOLEAN DEFAULT 1 NOT NULL")
        #expect(
            try postgres.addColumn(flag, to: "ports", default: .bool(true))
                == "ALTER TABLE \"ports\" ADD COLUMN \"open\" boolean DEFAULT true NOT NULL")
        let price = Column(name: "price", type: .decimal, isNullable: true)
        #expect(
            try sqlite.addColumn(price, to: "t", default: .decimal(Decimal(string: "1.50")!))
                == "ALTER TABLE \"t\" ADD COLUMN \"price\" DECIMAL_TEXT DEFAULT '1.5'")
        #expect(
            try postgres.addColumn(price, to: "t", default: .decimal(Decimal(string: "1.50")!))
                == "ALTER TABLE \"t\" ADD COLUMN \"price\" numeric DEFAULT 1.5")
        let note = Column(name: "note", type: .text, isNullable: false)
        #expect(
            try sqlite.addColumn(note, to: "t", default: .text("it's \\ here"))
                == "ALTER TABLE \"t\" ADD COLUMN \"note\" TEXT DEFAULT 'it''s \\ here' NOT NULL")
        #expect(
            try postgres.addColumn(note, to: "t", default: .text("it's \\ here"))
                == "ALTER TABLE \"t\" ADD COLUMN \"note\" text COLLATE \"C\" DEFAULT E'it''s \\\\ here' NOT NULL")
        let count = Column(name: "n", type: .integer, isNullable: true)
        #expect(try sqlite.addColumn(count, to: "t", default: nil) == "ALTER TABLE \"t\" ADD COLUMN \"n\" INTEGER")
        #expect(try postgres.addColumn(count, to: "t", default: .null) == "ALTER TABLE \"t\" ADD COLUMN \"n\" bigint")
        #expect(try postgres.literal(.integer(-3)) == "-3")
        #expect(try sqlite.literal(.double(0.5)) == "0.5")
        for value in [StoredValue.double(.infinity), .blob(Data([1])), .uuid(UUID()), .date(Date())] {
            #expect(throws: DepotError.self, "\(value)") { try postgres.literal(value) }
        }
    }

    @Test("a column's values are checked as text before its type or nullability changes")
    func valueChecks() {
        for renderer in [sqlite, postgres] {
            #expect(
                renderer.countNulls(in: "n", of: "t").sql
                    == "SELECT CAST(count(*) AS text) FROM \"t\" WHERE \"n\" IS NULL")
            #expect(
                renderer.nonNullTexts(of: "n", in: "t").sql
                    == "SELECT CAST(\"n\" AS text) FROM \"t\" WHERE \"n\" IS NOT NULL")
        }
    }

    @Test("a raw SQL step keeps the checksum ledgers recorded before raw SQL moved out of the core")
    func rawSQLChecksum() {
        let step = Migration("2 seed", [.sql(sqlite: "INSERT INTO ports (code) VALUES ('ENGM')")])
        #expect(step.operations[0].description == "sql sqlite: INSERT INTO ports (code) VALUES ('ENGM') postgres: -")
        // FNV-1a 64 of the name and that description, as every earlier version computed it.
        #expect(step.checksum == "ad74f5d092b282c5")
    }

    @Test("the ledger: one table keyed by version, read in order, rows recorded and forgotten by bound values")
    func ledger() {
        #expect(
            sqlite.createLedger
                == "CREATE TABLE IF NOT EXISTS \"depot_migrations\" (\"version\" INTEGER NOT NULL PRIMARY KEY, "
                + "\"name\" text NOT NULL, \"checksum\" text NOT NULL)")
        #expect(postgres.createLedger.contains("(\"version\" bigint NOT NULL PRIMARY KEY"))
        #expect(
            postgres.readLedger.sql
                == "SELECT CAST(\"version\" AS text), \"name\", \"checksum\" FROM \"depot_migrations\" ORDER BY \"version\""
        )
        let recorded = postgres.recordMigration(version: 3, name: "3 x", checksum: "c")
        #expect(
            recorded.sql
                == "INSERT INTO \"depot_migrations\" (\"version\", \"name\", \"checksum\") VALUES ($1, $2, $3)")
        #expect(recorded.arguments == [.integer(3), .text("3 x"), .text("c")])
        #expect(sqlite.recordMigration(version: 1, name: "1", checksum: "c").sql.hasSuffix("VALUES (?, ?, ?)"))
        #expect(sqlite.unrecordMigration(version: 2).sql == "DELETE FROM \"depot_migrations\" WHERE \"version\" = ?")
        #expect(postgres.unrecordMigration(version: 2).arguments == [.integer(2)])
    }

    @Test("PostgreSQL changes a column in place (text spelling 1e3 goes through double); SQLite rebuilds")
    func alterColumn() {
        let count = Column(name: "n", type: .integer, isNullable: false)
        #expect(SQLiteDialect().alterColumn(count, in: "t", fromText: true) == nil)
        #expect(
            PostgresDialect().alterColumn(count, in: "t", fromText: true) == [
                "ALTER TABLE \"t\" ALTER COLUMN \"n\" TYPE bigint USING CASE WHEN \"n\" ~ '[.eE]' THEN "
                    + "CAST(CAST(\"n\" AS double precision) AS bigint) ELSE CAST(\"n\" AS bigint) END",
                "ALTER TABLE \"t\" ALTER COLUMN \"n\" SET NOT NULL",
            ])
        let note = Column(name: "note", type: .text, isNullable: true)
        #expect(
            PostgresDialect().alterColumn(note, in: "t", fromText: false) == [
                "ALTER TABLE \"t\" ALTER COLUMN \"note\" TYPE text COLLATE \"C\" USING \"note\"::text",
                "ALTER TABLE \"t\" ALTER COLUMN \"note\" DROP NOT NULL",
            ])
        #expect(
            PostgresDialect().dropLegacyFoldedCopy(of: "name", in: "t")
                == "ALTER TABLE \"t\" DROP COLUMN IF EXISTS \"name#folded\"")
        #expect(SQLiteDialect().dropLegacyFoldedCopy(of: "name", in: "t") == nil)
    }

    @Test("SQLite's rebuild reads the definitions, copies the rows, and renames with the legacy rule around it")
    func sqliteRebuild() {
        let definitions = SQLiteDialect.definitions(of: "t")
        #expect(
            definitions.sql
                == "SELECT type, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY rowid")
        #expect(definitions.arguments == [.text("t")])
        #expect(
            SQLiteDialect.copyRows(
                into: "t#rebuild", from: "t", columns: "\"a\", \"b\"", values: "\"a\", CAST(\"b\" AS TEXT)")
                == "INSERT INTO \"t#rebuild\" (\"a\", \"b\") SELECT \"a\", CAST(\"b\" AS TEXT) FROM \"t\"")
        #expect(SQLiteDialect.legacyAlterTable(true) == "PRAGMA legacy_alter_table = ON")
        #expect(SQLiteDialect.legacyAlterTable(false) == "PRAGMA legacy_alter_table = OFF")
        #expect(sqlite.foreignKeySuspension?.suspend.sql == "PRAGMA foreign_keys = OFF")
        #expect(postgres.foreignKeySuspension == nil)
    }
}
