import Depot
import DepotSQL
import Testing

@Suite("SQLite table definitions, rewritten for a rebuild")
struct SQLiteTableDefinitionTests {
    @Test(
        "only the changed column's type and NOT NULL change; every other clause stays",
        arguments: [
            (
                "CREATE TABLE t (id INTEGER PRIMARY KEY, size TEXT DEFAULT '7' CHECK (size <> 'a,b'), note TEXT)",
                "size", "INTEGER", false,
                "CREATE TABLE \"n\" (id INTEGER PRIMARY KEY, size INTEGER DEFAULT '7' CHECK (size <> 'a,b'), note TEXT)"
            ),
            (
                "CREATE TABLE \"t\" (\"a b\" VARCHAR(10, 2) NOT NULL ON CONFLICT ABORT COLLATE NOCASE, x)",
                "a b", "TEXT", false, "CREATE TABLE \"n\" (\"a b\" TEXT COLLATE NOCASE, x)"
            ),
            (
                "CREATE TABLE t (a REAL CONSTRAINT must NOT NULL UNIQUE, b CHECK (b IS NOT NULL)) WITHOUT ROWID",
                "b", "TEXT", true,
                "CREATE TABLE \"n\" (a REAL CONSTRAINT must NOT NULL UNIQUE, b TEXT CHECK (b IS NOT NULL) NOT NULL) WITHOUT ROWID"
            ),
            (
                "CREATE TABLE t (a INTEGER, -- a comment, with a comma\n [b] TEXT REFERENCES p(id) NOT DEFERRABLE, UNIQUE (a, b))",
                "b", "INTEGER", true,
                "CREATE TABLE \"n\" (a INTEGER, [b] INTEGER REFERENCES p(id) NOT DEFERRABLE NOT NULL, UNIQUE (a, b))"
            ),
        ])
    func alter(sql: String, column: String, type: String, notNull: Bool, expected: String) throws {
        var definition = try SQLiteTableDefinition(sql, table: "t")
        try definition.alter(column: column, typeName: type, notNull: notNull)
        #expect(definition.sql(named: "\"n\"") == expected)
    }

    @Test("a column the definition lacks, or a table without a column list, is a migration error naming it")
    func errors() throws {
        var definition = try SQLiteTableDefinition("CREATE TABLE t (a TEXT)", table: "t")
        let missing = #expect(throws: DepotError.self) {
            try definition.alter(column: "b", typeName: "TEXT", notNull: false)
        }
        #expect(missing?.kind == .migration)
        #expect(missing?.message.contains("no column 'b'") == true, "\(missing?.message ?? "")")
        let noColumns = #expect(throws: DepotError.self) {
            _ = try SQLiteTableDefinition("CREATE TABLE t AS SELECT 1", table: "t")
        }
        #expect(noColumns?.kind == .migration)
        #expect(noColumns?.message.contains("cannot rebuild 't'") == true, "\(noColumns?.message ?? "")")
    }
}
