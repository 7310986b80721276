import Depot
import DepotSQL
import PostgresNIO

/// Compares a stored table with what an entity declares.
enum PostgresSchemaCheck {
    /// The columns of `table` in the current schema, in order; empty when there is no such table.
    static func columns(of table: String, on connection: PostgresConnection) async throws -> [SchemaDrift.StoredColumn]
    {
        var binds = PostgresBindings(capacity: 1)
        binds.append(table)
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT column_name::text, data_type::text, is_nullable::text, (column_default IS NOT NULL)::text \
                    FROM information_schema.columns \
                    WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position
                    """, binds: binds), logger: PostgresOperations.logger)
        var columns: [SchemaDrift.StoredColumn] = []
        for try await (name, type, nullable, hasDefault) in rows.decode((String, String, String, String).self) {
            columns.append(
                SchemaDrift.StoredColumn(
                    name: name, type: type, isNullable: nullable == "YES", hasDefault: hasDefault == "true"))
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
        _ table: TableDescription, stored: [SchemaDrift.StoredColumn], on connection: PostgresConnection,
        dialect: SQLDialect
    ) async throws {
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
        try SchemaDrift.verify(
            table, stored: stored, primaryKey: key, dialect: dialect, typeName: informationSchemaName)
    }
}
