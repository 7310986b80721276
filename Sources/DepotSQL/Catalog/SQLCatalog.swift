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
    public func catalogColumns(of table: String) -> SQLStatement { dialect.catalogColumns(of: table) }

    /// The rows of ``catalogColumns(of:)`` as columns.
    public static func catalogColumns(_ rows: [[String?]]) -> [CatalogColumn] {
        rows.map { row in
            CatalogColumn(
                name: row[0] ?? "", type: row[1] ?? "", isNotNull: row[2] == "1", keyPosition: Int(row[3] ?? "0") ?? 0,
                defaultSQL: row.count > 4 ? row[4] : nil)
        }
    }

    /// The names of the tables of the current schema, sorted (SQLite's own tables left out).
    public var catalogTables: SQLStatement { dialect.catalogTables }

    /// The indexes of `table` that were created by `CREATE INDEX` (not those behind a primary key):
    /// rows of name and unique (`1`/`0`), by name.
    public func catalogIndexes(of table: String) -> SQLStatement { dialect.catalogIndexes(of: table) }

    /// The columns of index `index`, in index order: one row each, the column's name.
    public func catalogIndexColumns(of index: String) -> SQLStatement { dialect.catalogIndexColumns(of: index) }

    /// Whether table `table` exists: one row holding its count, `1` or `0`.
    public func catalogTableExists(_ table: String) -> SQLStatement { dialect.catalogTableExists(table) }

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
