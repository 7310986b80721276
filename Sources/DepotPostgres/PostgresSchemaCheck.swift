import Depot
import DepotSQL
import PostgresNIO

/// Compares a stored table with what an entity declares.
enum PostgresSchemaCheck {
    struct StoredColumn: Sendable {
        var name: String
        var type: String
        var isNullable: Bool
    }

    /// The columns of `table` in the current schema, in order; empty when there is no such table.
    static func columns(of table: String, on connection: PostgresConnection) async throws -> [StoredColumn] {
        var binds = PostgresBindings(capacity: 1)
        binds.append(table)
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT column_name::text, data_type::text, is_nullable::text FROM information_schema.columns \
                    WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position
                    """, binds: binds), logger: PostgresOperations.logger)
        var columns: [StoredColumn] = []
        for try await (name, type, nullable) in rows.decode((String, String, String).self) {
            columns.append(StoredColumn(name: name, type: type, isNullable: nullable == "YES"))
        }
        return columns
    }

    /// The name `information_schema` gives a Depot column type.
    static func informationSchemaName(_ type: ColumnType) -> String {
        let name = SQLDialect.postgres.typeName(type)
        return name == "timestamptz" ? "timestamp with time zone" : name
    }

    /// Throws `.schemaMismatch` listing every difference (column, expected, found).
    static func verify(
        _ table: TableDescription, stored: [StoredColumn], on connection: PostgresConnection, dialect: SQLDialect
    ) async throws {
        var differences: [String] = []
        var byName: [String: StoredColumn] = [:]
        for column in stored { byName[column.name] = column }
        var expected = table.columns
        expected += dialect.foldedColumns(table).map {
            TableDescription.ColumnDescription(name: $0, type: .text, isNullable: true)
        }
        for column in expected {
            guard let found = byName.removeValue(forKey: column.name) else {
                differences.append(
                    "column \(column.name): expected \(dialect.typeName(column.type)), found no column")
                continue
            }
            let expectedType = informationSchemaName(column.type)
            if found.type != expectedType {
                differences.append("column \(column.name): expected type \(expectedType), found \(found.type)")
            }
            if found.isNullable != column.isNullable {
                differences.append(
                    "column \(column.name): expected \(column.isNullable ? "NULL allowed" : "NOT NULL"), "
                        + "found \(found.isNullable ? "NULL allowed" : "NOT NULL")")
            }
        }
        for extra in byName.values where !extra.isNullable {
            differences.append("column \(extra.name): not declared, and NOT NULL")
        }
        var binds = PostgresBindings(capacity: 1)
        binds.append(table.name)
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT a.attname::text FROM pg_index i \
                    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
                    WHERE i.indisprimary AND i.indrelid = \
                    to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1)) \
                    ORDER BY array_position(i.indkey::int2[], a.attnum)
                    """, binds: binds), logger: PostgresOperations.logger)
        var key: [String] = []
        for try await name in rows.decode(String.self) { key.append(name) }
        if key != table.primaryKey {
            differences.append(
                "primary key: expected (\(table.primaryKey.joined(separator: ", "))), found (\(key.joined(separator: ", ")))"
            )
        }
        guard differences.isEmpty else {
            throw DepotError(
                .schemaMismatch,
                "table '\(table.name)' does not match \(table.entityName): " + differences.joined(separator: "; "),
                table: table.name)
        }
    }
}
