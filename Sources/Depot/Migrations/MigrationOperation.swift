/// An index as migrations create it.
public struct IndexDescription: Sendable, Hashable {
    public var name: String
    public var table: String
    public var columns: [String]
    public var isUnique: Bool

    public init(name: String, table: String, columns: [String], isUnique: Bool = false) {
        self.name = name
        self.table = table
        self.columns = columns
        self.isUnique = isUnique
    }
}

/// A raw SQL script for one SQL dialect, by the dialect's name.
public struct RawSQL: Sendable, Hashable {
    /// The dialect's name (DepotSQL's `SQLDialect.name`: `sqlite`, `postgres`).
    public var dialect: String
    /// The script; `nil` when the step has none for this dialect.
    public var script: String?

    /// A script for `dialect`.
    public init(dialect: String, script: String?) {
        self.dialect = dialect
        self.script = script
    }
}

/// One change a ``Migration`` makes. Every store carries each one out the same way; where the
/// engine cannot alter a table in place (SQLite changing a column's type or nullability), the
/// store rebuilds the table itself: new table, copy, drop, rename, indexes recreated.
public struct MigrationOperation: Sendable, CustomStringConvertible {
    /// What the operation does.
    public enum Action: Sendable {
        case createTable(TableDescription)
        case dropTable(String)
        case renameTable(from: String, to: String)
        case addColumn(table: String, column: TableDescription.ColumnDescription, default: StoredValue?)
        case dropColumn(table: String, column: String)
        case renameColumn(table: String, from: String, to: String)
        case alterColumn(table: String, column: TableDescription.ColumnDescription)
        case createIndex(IndexDescription)
        case dropIndex(name: String)
        /// Raw SQL scripts, one per dialect by the dialect's name (a SQL store runs the one for its
        /// dialect, and fails the step when it has none).
        case sql(scripts: [RawSQL])
        case data(label: String, body: @Sendable (Transaction) async throws -> Void)
    }

    public var action: Action

    public init(_ action: Action) { self.action = action }

    /// Creates the table of `entity` as its schema declares it.
    public static func createTable<Root: Entity>(_ entity: Root.Type) -> Self {
        Self(.createTable(Root.schema.table))
    }

    /// Drops `table` and its rows.
    public static func dropTable(_ table: String) -> Self { Self(.dropTable(table)) }

    /// Renames a table.
    public static func renameTable(_ table: String, to newName: String) -> Self {
        Self(.renameTable(from: table, to: newName))
    }

    /// Adds a column; existing rows get `default` (required for a NOT NULL column).
    public static func addColumn(
        _ name: String, _ type: ColumnType, nullable: Bool = false, to table: String, default value: StoredValue? = nil
    ) -> Self {
        Self(.addColumn(table: table, column: .init(name: name, type: type, isNullable: nullable), default: value))
    }

    /// Drops a column and its values.
    public static func dropColumn(_ name: String, from table: String) -> Self {
        Self(.dropColumn(table: table, column: name))
    }

    /// Renames a column; its values stay.
    public static func renameColumn(_ name: String, to newName: String, in table: String) -> Self {
        Self(.renameColumn(table: table, from: name, to: newName))
    }

    /// Changes a column's type or nullability, converting the values the same way on every store;
    /// a value that does not convert (a NULL for NOT NULL, `4.5` for an integer, text that is not
    /// a decimal number such as `nan` or `0x10`) fails the step, writing nothing, and the error
    /// names the column, how many values and one of them.
    public static func alterColumn(_ name: String, to type: ColumnType, nullable: Bool, in table: String) -> Self {
        Self(.alterColumn(table: table, column: .init(name: name, type: type, isNullable: nullable)))
    }

    /// Creates an index (unique, composite).
    public static func createIndex(_ name: String, on table: String, columns: [String], unique: Bool = false) -> Self {
        Self(.createIndex(IndexDescription(name: name, table: table, columns: columns, isUnique: unique)))
    }

    /// Drops an index.
    public static func dropIndex(_ name: String) -> Self { Self(.dropIndex(name: name)) }

    /// Raw SQL, one script per dialect (statements separated by `;`, run as the engine splits
    /// them). A store whose dialect has no script fails the step, naming it. DepotSQL's
    /// `sql(sqlite:postgres:)` spells the dialects out.
    public static func sql(_ scripts: [RawSQL]) -> Self {
        Self(.sql(scripts: scripts))
    }

    /// A data step: reads and writes rows through repositories inside the step's transaction.
    /// Declare entities for the old and the new shape as needed; both are visible in the step.
    public static func data(_ label: String, _ body: @escaping @Sendable (Transaction) async throws -> Void) -> Self {
        Self(.data(label: label, body: body))
    }

    /// The operation that undoes this one, when it can be derived.
    public var inverse: MigrationOperation? {
        switch action {
        case .createTable(let table): return .dropTable(table.name)
        case .renameTable(let from, let to): return .renameTable(to, to: from)
        case .addColumn(let table, let column, _): return .dropColumn(column.name, from: table)
        case .renameColumn(let table, let from, let to): return .renameColumn(to, to: from, in: table)
        case .createIndex(let index): return .dropIndex(index.name)
        case .dropTable, .dropColumn, .alterColumn, .dropIndex, .sql, .data: return nil
        }
    }

    /// A canonical description (part of the step's checksum).
    public var description: String {
        func column(_ column: TableDescription.ColumnDescription) -> String {
            "\(column.name) \(column.type.rawValue)\(column.isNullable ? "?" : "")"
        }
        switch action {
        case .createTable(let table):
            return "create table \(table.name) (\(table.columns.map(column).joined(separator: ", "))) "
                + "primary key (\(table.primaryKey.joined(separator: ", ")))"
        case .dropTable(let table): return "drop table \(table)"
        case .renameTable(let from, let to): return "rename table \(from) to \(to)"
        case .addColumn(let table, let added, let value):
            return "add column \(column(added)) to \(table) default \(value.map { "\($0)" } ?? "none")"
        case .dropColumn(let table, let name): return "drop column \(name) from \(table)"
        case .renameColumn(let table, let from, let to): return "rename column \(from) to \(to) in \(table)"
        case .alterColumn(let table, let altered): return "alter column \(column(altered)) in \(table)"
        case .createIndex(let index):
            return "create \(index.isUnique ? "unique " : "")index \(index.name) on \(index.table) "
                + "(\(index.columns.joined(separator: ", ")))"
        case .dropIndex(let name): return "drop index \(name)"
        case .sql(let scripts):
            return "sql " + scripts.map { "\($0.dialect): \($0.script ?? "-")" }.joined(separator: " ")
        case .data(let label, _): return "data \(label)"
        }
    }
}
