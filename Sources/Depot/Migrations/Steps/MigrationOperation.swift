/// An index as migrations create it (see ``MigrationOperation/createIndex(_:on:columns:unique:)``).
public struct IndexDescription: Sendable, Hashable {
    /// The index's name, unique in the database.
    public var name: String
    /// The table indexed.
    public var table: String
    /// The columns indexed, in index order.
    public var columns: [String]
    /// Whether the index rejects two rows with the same values in ``columns``: writes that would
    /// fail with `.constraintViolation`, on every store.
    public var isUnique: Bool

    /// An index named `name` on `columns` of `table`.
    public init(name: String, table: String, columns: [String], isUnique: Bool = false) {
        self.name = name
        self.table = table
        self.columns = columns
        self.isUnique = isUnique
    }
}

/// A migration operation that only some stores know how to carry out, such as DepotSQL's raw
/// SQL scripts (`MigrationOperation.sql(sqlite:postgres:)`). A store that does not know it fails
/// the step, naming the operation by its `description` (which is also its part of the step's
/// checksum: keep it stable).
public protocol StoreSpecificOperation: Sendable, CustomStringConvertible {}

/// One change a ``Migration`` makes. Every store carries each one out the same way; where the
/// engine cannot alter a table in place (SQLite changing a column's type or nullability), the
/// store rebuilds the table itself: new table, copy, drop, rename, indexes recreated.
///
/// An operation that cannot be carried out (a missing table or column, a name already taken, a
/// value that does not convert) fails its step: ``MigratableStore/migrate(_:to:progress:)`` throws
/// a ``DepotError`` of kind ``DepotError/Kind/migration`` naming the step, with the cause as
/// ``DepotError/underlying``, and the step writes nothing.
public struct MigrationOperation: Sendable, CustomStringConvertible {
    /// What the operation does.
    public enum Action: Sendable {
        /// Creates a table, unless one with its name exists (see ``MigrationOperation/createTable(_:)``).
        case createTable(TableDescription)
        /// Drops the named table.
        case dropTable(String)
        /// Renames a table.
        case renameTable(from: String, to: String)
        /// Adds a column, filling existing rows with the default (NULL when `nil`).
        case addColumn(table: String, column: TableDescription.ColumnDescription, default: StoredValue?)
        /// Drops a column.
        case dropColumn(table: String, column: String)
        /// Renames a column.
        case renameColumn(table: String, from: String, to: String)
        /// Changes a column's type or nullability, converting its values.
        case alterColumn(table: String, column: TableDescription.ColumnDescription)
        /// Creates an index.
        case createIndex(IndexDescription)
        /// Drops the named index.
        case dropIndex(name: String)
        /// Creates the search index of a text column (see ``MigrationOperation/createSearchIndex(_:_:)``).
        case createSearchIndex(table: TableDescription, column: String)
        /// Drops the search index of a text column.
        case dropSearchIndex(table: TableDescription, column: String)
        /// An operation only some stores carry out (DepotSQL's raw SQL scripts); the others fail
        /// the step.
        case storeSpecific(any StoreSpecificOperation)
        /// Swift code reading and writing rows in the step's transaction; `label` names it in the
        /// step's checksum and in errors.
        case data(label: String, body: @Sendable (Transaction) async throws -> Void)
    }

    /// What the operation does.
    public var action: Action

    /// An operation doing `action`; the static builders (``createTable(_:)``,
    /// ``addColumn(_:_:nullable:to:default:)``, …) are the usual way to make one.
    public init(_ action: Action) { self.action = action }

    /// Creates the table of `entity` as its schema declares it, unless a table with its name
    /// exists.
    ///
    /// ```swift
    /// Migration("1 airports", [.createTable(Airport.self)])
    /// // SQLite:     CREATE TABLE IF NOT EXISTS "airports" ("icao" TEXT NOT NULL, …, PRIMARY KEY ("icao"))
    /// // PostgreSQL: CREATE TABLE IF NOT EXISTS "airports" ("icao" text NOT NULL, …, PRIMARY KEY ("icao"))
    /// ```
    ///
    /// The table is the schema's as the step runs: declare a frozen copy of the entity
    /// (`AirportV1`) for the step when the entity will change later, so the step's checksum stays.
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
    ///
    /// ```swift
    /// .addColumn("elevation", .double, to: "airports", default: .double(0))
    /// // SQLite:     ALTER TABLE "airports" ADD COLUMN "elevation" REAL DEFAULT 0.0 NOT NULL
    /// // PostgreSQL: ALTER TABLE "airports" ADD COLUMN "elevation" double precision DEFAULT 0.0 NOT NULL
    /// ```
    ///
    /// SQL stores take a Boolean, number, decimal or text default; a date, UUID or blob default
    /// (or a non-finite double) fails the step there: add the column as nullable and fill it with
    /// a ``data(_:_:)`` step.
    ///
    /// - Parameters:
    ///   - name: The new column's name.
    ///   - type: Its storage type.
    ///   - nullable: Whether it accepts NULL; a NOT NULL column needs `default`.
    ///   - table: The table to add it to.
    ///   - value: What existing rows, and rows written later without the column, hold.
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
    ///
    /// ```swift
    /// .renameColumn("elev", to: "elevation", in: "airports")
    /// // SQL: ALTER TABLE "airports" RENAME COLUMN "elev" TO "elevation"
    /// ```
    public static func renameColumn(_ name: String, to newName: String, in table: String) -> Self {
        Self(.renameColumn(table: table, from: name, to: newName))
    }

    /// Changes a column's type or nullability, converting the values the same way on every store;
    /// a value that does not convert (a NULL for NOT NULL, `4.5` for an integer, text that is not
    /// a decimal number such as `nan` or `0x10`) fails the step, writing nothing, and the error
    /// names the column, how many values and one of them.
    ///
    /// ```swift
    /// .alterColumn("elevation", to: .integer, nullable: true, in: "airports")
    /// // PostgreSQL: ALTER TABLE "airports" ALTER COLUMN "elevation" TYPE bigint USING "elevation"::bigint;
    /// //             ALTER TABLE "airports" ALTER COLUMN "elevation" DROP NOT NULL
    /// // SQLite:     CREATE TABLE "airports#rebuild" (…), rows copied with CAST, old table dropped,
    /// //             new one renamed, indexes recreated
    /// ```
    ///
    /// The step has no automatic inverse: give `down:` to make it reversible.
    public static func alterColumn(_ name: String, to type: ColumnType, nullable: Bool, in table: String) -> Self {
        Self(.alterColumn(table: table, column: .init(name: name, type: type, isNullable: nullable)))
    }

    /// Creates an index (unique, composite).
    ///
    /// ```swift
    /// .createIndex("airports_country", on: "airports", columns: ["country"])
    /// // SQL: CREATE INDEX "airports_country" ON "airports" ("country")
    /// ```
    ///
    /// A unique index over rows that already repeat its values fails the step; afterwards, writes
    /// that would repeat them fail with `.constraintViolation`.
    public static func createIndex(_ name: String, on table: String, columns: [String], unique: Bool = false) -> Self {
        Self(.createIndex(IndexDescription(name: name, table: table, columns: columns, isUnique: unique)))
    }

    /// Drops an index.
    public static func dropIndex(_ name: String) -> Self { Self(.dropIndex(name: name)) }

    /// Creates the search index of a text column, which ``Filter/matches(_:_:_:)`` and
    /// ``Ordering/relevance(_:to:_:)`` read, built from the rows there are and kept up to date
    /// whoever writes the rows (Depot or plain SQL). On SQLite it is an FTS5 index whose tokens
    /// are ``TextSearch``'s words, with a queue of changes that plain-SQL triggers fill and Depot
    /// folds in before each commit and search (so any client can write the table); on PostgreSQL
    /// a GIN index over the same words (`depot_search_vector(column)`), which the server keeps.
    ///
    /// ```swift
    /// Migration("4 search names", [.createSearchIndex(Airport.self, \.name)])
    /// ```
    ///
    /// The entity needs a one-column primary key and the column must hold text; the in-memory
    /// store searches without an index and only checks both.
    public static func createSearchIndex<Root: Entity>(_ entity: Root.Type, _ column: KeyPath<Root, some StorableValue>)
        -> Self
    {
        Self(.createSearchIndex(table: Root.schema.table, column: Root.schema.referenceName(column)))
    }

    /// Drops the search index of a text column: its index table, queue and triggers.
    public static func dropSearchIndex<Root: Entity>(_ entity: Root.Type, _ column: KeyPath<Root, some StorableValue>)
        -> Self
    {
        Self(.dropSearchIndex(table: Root.schema.table, column: Root.schema.referenceName(column)))
    }

    /// An operation only some stores carry out; the others fail the step, naming it.
    public static func storeSpecific(_ operation: any StoreSpecificOperation) -> Self {
        Self(.storeSpecific(operation))
    }

    /// A data step: reads and writes rows through repositories inside the step's transaction.
    /// Declare entities for the old and the new shape as needed; both are visible in the step.
    ///
    /// ```swift
    /// .data("feet to metres") { tx in
    ///     for try await batch in tx.repository(AirportV2.self).batches(of: 10_000) {
    ///         try await tx.repository(AirportV2.self).upsert(batch.map { $0.inMetres() })
    ///     }
    /// }
    /// ```
    ///
    /// Only `label` enters the step's checksum: editing the closure's code is not detected. An
    /// error the closure throws fails the step. The step has no automatic inverse.
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
        case .createSearchIndex(let table, let column): return Self(.dropSearchIndex(table: table, column: column))
        case .dropSearchIndex(let table, let column): return Self(.createSearchIndex(table: table, column: column))
        case .dropTable, .dropColumn, .alterColumn, .dropIndex, .storeSpecific, .data: return nil
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
        case .createSearchIndex(let table, let column): return "create search index on \(table.name) (\(column))"
        case .dropSearchIndex(let table, let column): return "drop search index on \(table.name) (\(column))"
        case .storeSpecific(let operation): return operation.description
        case .data(let label, _): return "data \(label)"
        }
    }
}
