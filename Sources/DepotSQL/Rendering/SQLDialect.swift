import Depot
import Foundation

/// The SQL flavour a statement is rendered in.
public enum SQLDialect: Sendable, Hashable {
    /// SQLite 3.35 or later (upsert, `NULLS LAST`). Case folding, distance and exact-decimal
    /// ordering use the functions and collation `SQLiteStore` registers on each connection.
    case sqlite
    /// PostgreSQL 13 or later.
    case postgres

    /// The dialect's name in raw SQL migration steps (`RawSQL.dialect`): `sqlite`, `postgres`.
    public var name: String { self == .sqlite ? "sqlite" : "postgres" }

    /// The engine's name in messages: `SQLite`, `PostgreSQL`.
    public var displayName: String { self == .sqlite ? "SQLite" : "PostgreSQL" }

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

    /// How the engine's catalog spells a Depot type when asked about a stored column (PostgreSQL's
    /// `information_schema` says `timestamp with time zone` for `timestamptz`).
    public func catalogTypeName(_ type: ColumnType) -> String {
        let name = typeName(type)
        return self == .postgres && name == "timestamptz" ? "timestamp with time zone" : name
    }

    /// The Depot type a catalog's declared type stands for, by its `ColumnType.rawValue` (the
    /// catalog's own spelling when none does). `url` reads as `text`: PostgreSQL stores both as text.
    public func depotTypeName(fromCatalog name: String) -> String {
        for type in ColumnType.allCases where catalogTypeName(type).caseInsensitiveCompare(name) == .orderedSame {
            return type == .url ? ColumnType.text.rawValue : type.rawValue
        }
        return name
    }

    /// The name of the case-folded copy of text column `name` that PostgreSQL tables created by
    /// earlier versions of Depot hold. Depot no longer writes or reads these copies (the server folds,
    /// with ``SQLFunctions/fold``); tables are checked as if they were absent, and migrations that
    /// drop, rename or retype `name` drop its copy.
    public static func legacyFoldedColumn(_ name: String) -> String { name + "#folded" }

    /// An empty set of values of `type`, for the right side of `IN`: `x IN (…)` is false and
    /// `x NOT IN (…)` true for every row (PostgreSQL has no empty list, and needs the type).
    public func emptySet(of type: ColumnType) -> String {
        switch self {
        case .sqlite: "(SELECT NULL WHERE 0)"
        case .postgres: "(SELECT CAST(NULL AS \(typeName(type))) WHERE FALSE)"
        }
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
