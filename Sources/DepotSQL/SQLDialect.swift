import Depot

/// The SQL flavour a statement is rendered in.
public enum SQLDialect: Sendable, Hashable {
    /// SQLite 3.35 or later (upsert, `NULLS LAST`). Case folding, distance and exact-decimal
    /// ordering use the functions and collation `SQLiteStore` registers on each connection.
    case sqlite
    /// PostgreSQL 13 or later.
    case postgres

    /// The declared column type for a storage type.
    ///
    /// SQLite names are chosen so that the type affinity is right (`DECIMAL_TEXT` keeps exact
    /// digits as text) and so the Depot type can be read back from the schema.
    public func typeName(_ type: ColumnType) -> String {
        switch (self, type) {
        case (.sqlite, .bool): "BOOLEAN"
        case (.sqlite, .integer): "INTEGER"
        case (.sqlite, .double): "REAL"
        case (.sqlite, .decimal): "DECIMAL_TEXT"
        case (.sqlite, .text): "TEXT"
        case (.sqlite, .blob): "BLOB"
        case (.sqlite, .date): "DATE_REAL"
        case (.sqlite, .uuid): "UUID_BLOB"
        case (.sqlite, .url): "URL_TEXT"
        case (.sqlite, .json): "JSON_TEXT"
        case (.postgres, .bool): "boolean"
        case (.postgres, .integer): "bigint"
        case (.postgres, .double): "double precision"
        case (.postgres, .decimal): "numeric"
        case (.postgres, .text): "text"
        case (.postgres, .blob): "bytea"
        case (.postgres, .date): "timestamptz"
        case (.postgres, .uuid): "uuid"
        case (.postgres, .url): "text"
        case (.postgres, .json): "jsonb"
        }
    }

    /// The name of the column holding the case-folded copy of text column `name`.
    ///
    /// PostgreSQL has no function equal to ``TextFolding/fold(_:)`` (`lower()` depends on the
    /// collation and does not fold "ß" to "ss"), so its store keeps, next to each text column, a
    /// copy folded by Depot on every write; case-insensitive matching reads the copy.
    public static func foldedColumn(_ name: String) -> String { name + "#folded" }

    /// The columns a table holds in this dialect beyond its entity's: the folded copy of each
    /// text column on PostgreSQL, none on SQLite.
    public func foldedColumns(_ table: TableDescription) -> [String] {
        guard self == .postgres else { return [] }
        return table.columns.filter { $0.type == .text }.map { Self.foldedColumn($0.name) }
    }

    /// The placeholder of parameter `index` (1-based): `?` on SQLite, `$index` on PostgreSQL.
    public func placeholder(_ index: Int) -> String {
        self == .sqlite ? "?" : "$\(index)"
    }

    /// The identifier in double quotes. Identifiers come from validated schemas; embedded quotes
    /// are doubled all the same.
    public func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// SQL text and the values bound to its parameters, in order.
public struct SQLStatement: Sendable, Hashable, CustomStringConvertible {
    /// The SQL, with `?` (SQLite) or `$n` (PostgreSQL) placeholders.
    public var sql: String
    /// The bound values.
    public var arguments: [StoredValue]

    public init(sql: String, arguments: [StoredValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The SQL and the number of arguments; the values are not shown (they may be secrets).
    public var description: String { "\(sql) [\(arguments.count) argument(s)]" }
}
