import Depot
import Foundation

extension SQLRenderer {
    // MARK: - Schema changes

    /// `DROP TABLE "table"`.
    public func dropTable(_ table: String) -> String { "DROP TABLE \(quote(table))" }

    /// `DROP TABLE IF EXISTS "table"`, with what depends on it where the engine needs saying so
    /// (`CASCADE` on PostgreSQL): how erasing a database drops each table.
    public func eraseTable(_ table: String) -> String {
        "DROP TABLE IF EXISTS \(quote(table))\(dialect.dropTableCascade)"
    }

    /// `DROP FUNCTION IF EXISTS signature` (a signature as the catalog gives it, e.g. by
    /// ``searchIndexFunctions``).
    public func dropFunction(_ signature: String) -> String { "DROP FUNCTION IF EXISTS \(signature)" }

    /// `ALTER TABLE "from" RENAME TO "to"`.
    public func renameTable(_ table: String, to newName: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME TO \(quote(newName))"
    }

    /// `ALTER TABLE … ADD COLUMN` for `column`, filling existing rows with `value` (a `DEFAULT`
    /// literal: DDL takes no parameters).
    ///
    /// - Throws: A `DepotError` of kind `.migration` for a default DDL cannot spell (a blob,
    ///   date or UUID, a double that is not finite).
    public func addColumn(
        _ column: TableDescription.ColumnDescription, to table: String, default value: StoredValue?
    ) throws -> String {
        var sql = "ALTER TABLE \(quote(table)) ADD COLUMN \(quote(column.name)) \(dialect.columnTypeName(column.type))"
        if let value, !value.isNull { sql += " DEFAULT " + (try literal(value)) }
        if !column.isNullable { sql += " NOT NULL" }
        return sql
    }

    /// `ALTER TABLE "table" DROP COLUMN "column"`.
    public func dropColumn(_ column: String, from table: String) -> String {
        "ALTER TABLE \(quote(table)) DROP COLUMN \(quote(column))"
    }

    /// `ALTER TABLE "table" RENAME COLUMN "from" TO "to"`.
    public func renameColumn(_ column: String, to newName: String, in table: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME COLUMN \(quote(column)) TO \(quote(newName))"
    }

    /// `DROP INDEX "name"`.
    public func dropIndex(_ name: String) -> String { "DROP INDEX \(quote(name))" }

    /// How many rows of `table` hold NULL in `column`, as text: what a column must not hold to
    /// become NOT NULL.
    public func countNulls(in column: String, of table: String) -> SQLStatement {
        SQLStatement(sql: "SELECT CAST(count(*) AS text) FROM \(quote(table)) WHERE \(quote(column)) IS NULL")
    }

    /// The values of `column` of `table` that are not NULL, as text: what a column changing to a
    /// numeric type must be able to convert.
    public func nonNullTexts(of column: String, in table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT CAST(\(quote(column)) AS text) FROM \(quote(table)) WHERE \(quote(column)) IS NOT NULL")
    }

    /// `value` as a literal of this dialect, for `DEFAULT` clauses.
    ///
    /// - Throws: A `DepotError` of kind `.migration` for a value DDL cannot spell.
    public func literal(_ value: StoredValue) throws -> String {
        switch value {
        case .null: return "NULL"
        case .bool(let flag): return dialect.literal(flag)
        case .integer(let number): return String(number)
        case .double(let number):
            guard number.isFinite else { throw DepotError(.migration, "a default of \(number) cannot be stored") }
            return "\(number)"
        case .decimal(let number): return dialect.literal(number)
        case .text(let text): return dialect.literal(text)
        case .blob, .date, .uuid:
            throw DepotError(
                .migration,
                "a default of kind \(value.excerpt) is not supported in DDL; add the column as nullable "
                    + "and fill it with a data step")
        }
    }

    // MARK: - The ledger

    /// The table that records applied migrations, the same on every SQL store.
    public static let ledger = "depot_migrations"

    /// `CREATE TABLE IF NOT EXISTS` for the ledger: version (the key), name, checksum.
    public var createLedger: String {
        "CREATE TABLE IF NOT EXISTS \(quote(Self.ledger)) (\"version\" \(dialect.typeName(.integer)) NOT NULL "
            + "PRIMARY KEY, \"name\" text NOT NULL, \"checksum\" text NOT NULL)"
    }

    /// The ledger's rows, by version, as text.
    public var readLedger: SQLStatement {
        SQLStatement(
            sql: "SELECT CAST(\"version\" AS text), \"name\", \"checksum\" FROM \(quote(Self.ledger)) "
                + "ORDER BY \"version\"")
    }

    /// Records that step `name` (of `checksum`) brought the database to `version`.
    public func recordMigration(version: Int, name: String, checksum: String) -> SQLStatement {
        SQLStatement(
            sql: "INSERT INTO \(quote(Self.ledger)) (\"version\", \"name\", \"checksum\") VALUES ("
                + "\(dialect.placeholder(1)), \(dialect.placeholder(2)), \(dialect.placeholder(3)))",
            arguments: [.integer(Int64(version)), .text(name), .text(checksum)])
    }

    /// Forgets the step that brought the database to `version` (a step reverted).
    public func unrecordMigration(version: Int) -> SQLStatement {
        SQLStatement(
            sql: "DELETE FROM \(quote(Self.ledger)) WHERE \"version\" = " + dialect.placeholder(1),
            arguments: [.integer(Int64(version))])
    }
}
