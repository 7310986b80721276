import Depot

/// A database's tables as the engine reports them, normalized so that SQLite and PostgreSQL
/// compare equal when they hold the same schema: Depot type names instead of engine ones,
/// PostgreSQL's folded copies left out, tables and indexes sorted by name.
package struct IntrospectedSchema: Sendable, Hashable, CustomStringConvertible {
    package struct Column: Sendable, Hashable {
        package var name: String
        /// The Depot type (`url` reads as `text`: PostgreSQL stores both as text).
        package var type: String
        package var isNullable: Bool
    }

    package struct Index: Sendable, Hashable {
        package var name: String
        package var columns: [String]
        package var isUnique: Bool
    }

    package struct Table: Sendable, Hashable {
        package var name: String
        package var columns: [Column]
        package var primaryKey: [String]
        package var indexes: [Index]
    }

    package var tables: [Table]

    package var description: String {
        tables.map { table in
            let columns = table.columns.map { "\($0.name) \($0.type)\($0.isNullable ? "" : " not null")" }
            let indexes = table.indexes.map {
                "\($0.isUnique ? "unique " : "")\($0.name)(\($0.columns.joined(separator: ", ")))"
            }
            return "\(table.name)(\(columns.joined(separator: ", ")); key \(table.primaryKey); \(indexes))"
        }.joined(separator: "\n")
    }
}

extension SQLMigrator {
    /// The normalized schema of the store's database (its ledger included).
    package static func introspect(on store: some Store) async throws -> IntrospectedSchema {
        try await store.transaction { writer in
            let session = try session(writer)
            let dialect = session.dialect
            func texts(_ sql: String, _ arguments: [StoredValue] = []) async throws -> [[String?]] {
                try await session.texts(SQLStatement(sql: sql, arguments: arguments))
            }
            let tableList =
                dialect == .sqlite
                ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
                : "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
            var tables: [IntrospectedSchema.Table] = []
            for name in try await texts(tableList).compactMap({ $0.first ?? nil }) {
                var table = IntrospectedSchema.Table(name: name, columns: [], primaryKey: [], indexes: [])
                var keyed: [(Int, String)] = []
                for column in try await columns(of: name, session)
                where !column.name.hasSuffix(SQLDialect.foldedColumn("")) {
                    table.columns.append(
                        .init(
                            name: column.name, type: normalizedType(column.type, dialect), isNullable: !column.notNull))
                    if column.key > 0 { keyed.append((column.key, column.name)) }
                }
                switch dialect {
                case .sqlite:
                    table.primaryKey = keyed.sorted { $0.0 < $1.0 }.map(\.1)
                    for row in try await texts(
                        "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin = 'c' ORDER BY name",
                        [.text(name)])
                    {
                        guard let index = row[0] else { continue }
                        let columns = try await texts(
                            "SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(index)]
                        ).compactMap { $0[0] }
                        table.indexes.append(.init(name: index, columns: columns, isUnique: row[1] == "1"))
                    }
                case .postgres:
                    let regclass = "to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1))"
                    table.primaryKey = try await texts(
                        "SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                            + "AND a.attnum = ANY(i.indkey) WHERE i.indisprimary AND i.indrelid = \(regclass) "
                            + "ORDER BY array_position(i.indkey::int2[], a.attnum)", [.text(name)]
                    ).compactMap { $0[0] }
                    for row in try await texts(
                        "SELECT c.relname::text, CASE WHEN i.indisunique THEN '1' ELSE '0' END FROM pg_index i "
                            + "JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisprimary AND i.indrelid = "
                            + "\(regclass) ORDER BY c.relname", [.text(name)])
                    {
                        guard let index = row[0] else { continue }
                        let columns = try await texts(
                            "SELECT a.attname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                                + "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                                + "WHERE c.relname = $1 AND c.relnamespace = to_regnamespace(current_schema()) "
                                + "ORDER BY array_position(i.indkey::int2[], a.attnum)", [.text(index)]
                        ).compactMap { $0[0] }
                        table.indexes.append(.init(name: index, columns: columns, isUnique: row[1] == "1"))
                    }
                }
                tables.append(table)
            }
            return IntrospectedSchema(tables: tables)
        }
    }

    /// The Depot type an engine's declared type stands for (the engine's name when none does).
    static func normalizedType(_ name: String, _ dialect: SQLDialect) -> String {
        for type in ColumnType.allCases {
            var spelled = dialect.typeName(type)
            if dialect == .postgres && spelled == "timestamptz" { spelled = "timestamp with time zone" }
            if spelled.caseInsensitiveCompare(name) == .orderedSame {
                return type == .url ? ColumnType.text.rawValue : type.rawValue
            }
        }
        return name
    }
}
