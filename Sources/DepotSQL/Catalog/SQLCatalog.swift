import Depot

/// A column as the database's catalog describes it.
public struct CatalogColumn: Sendable, Hashable {
    /// The column's name.
    public var name: String
    /// The declared type as the catalog spells it (`TEXT` on SQLite, `timestamp with time zone`
    /// on PostgreSQL).
    public var type: String
    /// Whether the column is `NOT NULL`.
    public var isNotNull: Bool
    /// The column's position in the primary key, from 1; 0 when it is not part of it.
    public var keyPosition: Int
    /// The `DEFAULT` expression, as SQL text, when the column has one.
    public var defaultSQL: String?

    /// A column description.
    public init(name: String, type: String, isNotNull: Bool, keyPosition: Int, defaultSQL: String?) {
        self.name = name
        self.type = type
        self.isNotNull = isNotNull
        self.keyPosition = keyPosition
        self.defaultSQL = defaultSQL
    }
}

extension SQLRenderer {
    // MARK: - Catalog queries

    /// The columns of `table` in the current schema, in order, as rows of text that
    /// ``catalogColumns(_:)`` reads: name, declared type, NOT NULL (`1`/`0`), primary-key
    /// position (`0`: none), default (NULL: none). No rows when there is no such table.
    ///
    /// ```sql
    /// -- SQLite
    /// SELECT name, type, "notnull", pk, dflt_value FROM pragma_table_info(?) ORDER BY cid
    /// ```
    public func catalogColumns(of table: String) -> SQLStatement {
        switch dialect {
        case .sqlite:
            SQLStatement(
                sql: "SELECT name, type, \"notnull\", pk, dflt_value FROM pragma_table_info(?) ORDER BY cid",
                arguments: [.text(table)])
        case .postgres:
            SQLStatement(
                sql: "SELECT c.column_name::text, c.data_type::text, "
                    + "CASE WHEN c.is_nullable = 'NO' THEN '1' ELSE '0' END, "
                    // indkey is an int2vector: as an array its positions start at 0.
                    + "COALESCE(array_position(i.indkey::int2[], c.ordinal_position::int::int2) "
                    + "- array_lower(i.indkey::int2[], 1) + 1, 0)::text, "
                    + "c.column_default::text FROM information_schema.columns c "
                    + "LEFT JOIN pg_index i ON i.indisprimary AND i.indrelid = \(Self.regclass(1)) "
                    + "WHERE c.table_schema = current_schema() AND c.table_name::text = $1::text "
                    + "ORDER BY c.ordinal_position",
                arguments: [.text(table)])
        }
    }

    /// The rows of ``catalogColumns(of:)`` as columns.
    public static func catalogColumns(_ rows: [[String?]]) -> [CatalogColumn] {
        rows.map { row in
            CatalogColumn(
                name: row[0] ?? "", type: row[1] ?? "", isNotNull: row[2] == "1", keyPosition: Int(row[3] ?? "0") ?? 0,
                defaultSQL: row.count > 4 ? row[4] : nil)
        }
    }

    /// The names of the tables of the current schema, sorted (SQLite's own tables left out).
    public var catalogTables: SQLStatement {
        switch dialect {
        case .sqlite:
            SQLStatement(
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        case .postgres:
            SQLStatement(
                sql: "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
        }
    }

    /// The indexes of `table` that were created by `CREATE INDEX` (not those behind a primary key):
    /// rows of name and unique (`1`/`0`), by name.
    public func catalogIndexes(of table: String) -> SQLStatement {
        switch dialect {
        case .sqlite:
            SQLStatement(
                sql: "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin = 'c' ORDER BY name",
                arguments: [.text(table)])
        case .postgres:
            SQLStatement(
                sql: "SELECT c.relname::text, CASE WHEN i.indisunique THEN '1' ELSE '0' END FROM pg_index i "
                    + "JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisprimary AND i.indrelid = "
                    + "\(Self.regclass(1)) ORDER BY c.relname", arguments: [.text(table)])
        }
    }

    /// The columns of index `index`, in index order: one row each, the column's name.
    public func catalogIndexColumns(of index: String) -> SQLStatement {
        switch dialect {
        case .sqlite:
            SQLStatement(sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [.text(index)])
        case .postgres:
            SQLStatement(
                sql: "SELECT a.attname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                    + "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                    + "WHERE c.relname = $1 AND c.relnamespace = to_regnamespace(current_schema()) "
                    + "ORDER BY array_position(i.indkey::int2[], a.attnum)", arguments: [.text(index)])
        }
    }

    /// Whether table `table` exists: one row holding its count, `1` or `0`.
    public func catalogTableExists(_ table: String) -> SQLStatement {
        switch dialect {
        case .sqlite:
            SQLStatement(
                sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [.text(table)])
        case .postgres:
            SQLStatement(
                sql: "SELECT count(*)::text FROM information_schema.tables WHERE table_schema = current_schema() "
                    + "AND table_name = $1", arguments: [.text(table)])
        }
    }

    /// PostgreSQL: the table named by parameter `index`, in the current schema, as a `regclass`.
    static func regclass(_ index: Int) -> String {
        "to_regclass(quote_ident(current_schema()) || '.' || quote_ident($\(index)::text))"
    }
}

extension SQLConnection {
    /// The catalog's description of `table`'s columns, in order; empty when there is no such table.
    public func catalogColumns(of table: String, _ renderer: SQLRenderer) async throws -> [CatalogColumn] {
        SQLRenderer.catalogColumns(try await texts(renderer.catalogColumns(of: table)))
    }

    /// The indexes of `table` made by `CREATE INDEX` (not the primary key's), by name, with
    /// their columns in index order.
    public func catalogIndexes(of table: String, _ renderer: SQLRenderer) async throws -> [IndexDescription] {
        var indexes: [IndexDescription] = []
        for row in try await texts(renderer.catalogIndexes(of: table)) {
            guard let name = row[0] else { continue }
            let columns = try await texts(renderer.catalogIndexColumns(of: name)).compactMap { $0[0] }
            indexes.append(IndexDescription(name: name, table: table, columns: columns, isUnique: row[1] == "1"))
        }
        return indexes
    }
}
