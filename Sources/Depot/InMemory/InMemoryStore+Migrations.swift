import Foundation

extension InMemoryStore: MigratableStore {
    /// Applies `migrations` to the tables in memory, through the same driver as the SQL stores:
    /// the same ledger checks, one transaction per step, the same errors. Raw SQL steps cannot run
    /// here and fail naming the step.
    ///
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/migration`` (see
    ///   ``MigratableStore/applyMigrations(_:to:progress:)``).
    public func applyMigrations(
        _ migrations: Migrations, to target: Int?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome {
        try await MigrationRunner.migrate(migrations, to: target, on: self, progress: progress)
    }

    /// The ledger kept with the tables in memory, in version order.
    public func appliedMigrations() async throws -> [AppliedMigration] {
        try await MigrationRunner.applied(on: self)
    }

    /// Compares the tables in memory with the schemas of `entities`, as the SQL stores compare
    /// theirs.
    ///
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/schemaMismatch`` listing every table
    ///   that is missing or differs.
    public func checkSchema(of entities: [any Entity.Type]) async throws {
        let database = currentDatabase()
        try await SchemaComparison.check(entities) { description in
            try database.table(for: description) != nil
        }
    }

    /// The table named `name` as held in memory, or `nil`.
    public func storedTable(_ name: String) async throws -> StoredTable? {
        let database = currentDatabase()
        guard let table = database.tables[name] else { return nil }
        return StoredTable(
            name: name,
            columns: table.description.columns.map {
                StoredTable.Column(
                    name: $0.name, type: $0.type, typeName: $0.type.rawValue, isNullable: $0.isNullable,
                    hasDefault: table.defaults[$0.name] != nil)
            },
            primaryKey: table.description.primaryKey,
            indexes: database.indexes.values.filter { $0.table == name }.sorted { $0.name < $1.name })
    }

    /// Removes every table, index and the ledger, in one transaction; observers of the tables
    /// that were there are told they changed.
    public func eraseDatabase() async throws {
        try await withMigrationSession { writer in
            try writer.withActive { state in
                for name in state.database.tables.keys { state.touched.wrote(name) }
                state.database = InMemoryDatabase()
            }
        }
    }

}

extension InMemoryWriter: MigrationSession {
    /// Transactions of the in-memory store are serialized already.
    package func lockForMigration() async throws {}

    package func readLedger() async throws -> [AppliedMigration] {
        try withActive { $0.database.ledger }
    }

    package func record(_ step: Migration, version: Int) async throws {
        try withActive { state in
            state.database.ledger.append(AppliedMigration(version: version, name: step.name, checksum: step.checksum))
        }
    }

    package func unrecord(version: Int) async throws {
        try withActive { state in state.database.ledger.removeAll { $0.version == version } }
    }

    package func apply(_ operation: MigrationOperation) async throws {
        switch operation.action {
        case .data(_, let body):
            try await body(Transaction(writer: self))
        case .storeSpecific(let specific):
            throw DepotError(
                .migration, "the in-memory store cannot carry out '\(specific)' (raw SQL runs on SQL stores)")
        default:
            try withActive { state in
                var database = state.database
                try database.apply(operation.action)
                // The tables the operation changed, before and after (observers re-read them).
                for name in Set(state.database.tables.keys).union(database.tables.keys) {
                    let before = state.database.tables[name]
                    let after = database.tables[name]
                    if before?.description != after?.description || before?.rows.count != after?.rows.count {
                        state.touched.wrote(name)
                    }
                }
                state.database = database
            }
        }
    }
}

extension InMemoryDatabase {
    /// Carries out a schema operation on the tables, with the checks and messages of the SQL
    /// stores (NOT NULL needs a default; values must convert before a column's type changes).
    mutating func apply(_ action: MigrationOperation.Action) throws {
        switch action {
        case .createTable(let description):
            if tables[description.name] == nil {
                tables[description.name] = Table(description: description)
                for index in description.indexes { indexes[index.name] = index }
            }
        case .dropTable(let name):
            _ = try existing(name)
            tables[name] = nil
            indexes = indexes.filter { $0.value.table != name }
        case .renameTable(let from, let to):
            var table = try existing(from)
            guard tables[to] == nil else { throw DepotError(.migration, "table '\(to)' exists already", table: to) }
            table.description.name = to
            tables[from] = nil
            tables[to] = table
            for (name, index) in indexes where index.table == from { indexes[name]?.table = to }
        case .addColumn(let name, let column, let value):
            var table = try existing(name)
            if !column.isNullable && value == nil {
                throw DepotError(
                    .migration,
                    "adding NOT NULL column '\(column.name)' to '\(name)' needs a default for existing rows",
                    table: name, column: column.name)
            }
            guard table.description.columnIndex(column.name) == nil else {
                throw DepotError(.migration, "table '\(name)' has a column '\(column.name)' already", table: name)
            }
            table.description.columns.append(column)
            if let value, !value.isNull { table.defaults[column.name] = value }
            for key in table.rows.keys { table.rows[key]?.append(value ?? .null) }
            tables[name] = table
        case .dropColumn(let name, let column):
            var table = try existing(name)
            let position = try self.column(column, of: table)
            guard !table.description.primaryKey.contains(column) else {
                throw DepotError(.migration, "cannot drop key column '\(column)' of '\(name)'", table: name)
            }
            table.description.columns.remove(at: position)
            table.defaults[column] = nil
            for key in table.rows.keys { table.rows[key]?.remove(at: position) }
            indexes = indexes.filter { !($0.value.table == name && $0.value.columns.contains(column)) }
            tables[name] = table
        case .renameColumn(let name, let from, let to):
            var table = try existing(name)
            let position = try self.column(from, of: table)
            guard table.description.columnIndex(to) == nil else {
                throw DepotError(.migration, "table '\(name)' has a column '\(to)' already", table: name)
            }
            table.description.columns[position].name = to
            table.description.primaryKey = table.description.primaryKey.map { $0 == from ? to : $0 }
            if let value = table.defaults.removeValue(forKey: from) { table.defaults[to] = value }
            for (index, description) in indexes where description.table == name {
                indexes[index]?.columns = description.columns.map { $0 == from ? to : $0 }
            }
            tables[name] = table
        case .alterColumn(let name, let column):
            var table = try existing(name)
            let position = try self.column(column.name, of: table)
            table.rows = try Self.converted(table.rows, at: position, to: column, table: name)
            table.description.columns[position] = column
            tables[name] = table
        case .createIndex(let index):
            let table = try existing(index.table)
            for name in index.columns { _ = try self.column(name, of: table) }
            guard indexes[index.name] == nil else {
                throw DepotError(.migration, "index '\(index.name)' exists already", table: index.table)
            }
            indexes[index.name] = index
            try checkUniqueIndexes(of: table)
        case .dropIndex(let name):
            guard indexes.removeValue(forKey: name) != nil else {
                throw DepotError(.migration, "no index '\(name)'")
            }
        case .createSearchIndex(let description, let column), .dropSearchIndex(let description, let column):
            // Searches need no index here: the shape is checked as SQL stores check it.
            let table = try existing(description.name)
            try TextSearch.checkIndexable(table.description, column: column)
        case .storeSpecific, .data:
            break  // carried out by the session
        }
    }

    private func existing(_ name: String) throws -> Table {
        guard let table = tables[name] else { throw DepotError(.migration, "no table '\(name)'", table: name) }
        return table
    }

    private func column(_ name: String, of table: Table) throws -> Int {
        guard let position = table.description.columnIndex(name) else {
            throw DepotError(
                .migration, "table '\(table.description.name)' has no column '\(name)'", table: table.description.name,
                column: name)
        }
        return position
    }

    /// The rows with column `position` converted to `column`'s type, refusing what SQL refuses.
    private static func converted(
        _ rows: [[StoredValue]: [StoredValue]], at position: Int, to column: TableDescription.ColumnDescription,
        table: String
    ) throws -> [[StoredValue]: [StoredValue]] {
        let nulls = rows.values.count { $0[position].isNull }
        if !column.isNullable && nulls > 0 {
            throw DepotError(
                .migration, "column '\(column.name)' of '\(table)' cannot become NOT NULL: \(nulls) row(s) hold NULL",
                table: table, column: column.name)
        }
        var result = rows
        var bad = 0
        var example: String?
        for (key, row) in rows {
            let value = row[position]
            guard let converted = convert(value, to: column.type) else {
                bad += 1
                example = example ?? text(of: value)
                continue
            }
            result[key]?[position] = converted
        }
        if bad > 0 {
            throw DepotError(
                .migration,
                "column '\(column.name)' of '\(table)' cannot become \(column.type.rawValue): \(bad) value(s) do not "
                    + "convert (e.g. '\(example ?? "")')", table: table, column: column.name)
        }
        return result
    }

    /// `value` as a value of `type`, or nil when it does not convert.
    private static func convert(_ value: StoredValue, to type: ColumnType) -> StoredValue? {
        if value.isNull { return .null }
        switch (type, value) {
        case (.integer, .integer), (.double, .double), (.text, .text): return value
        case (.integer, .double(let number)):
            return number.rounded() == number && abs(number) < 9.2e18 ? .integer(Int64(number)) : nil
        case (.integer, .text(let text)): return NumericText.integer(text).map { .integer($0) }
        case (.double, .integer(let number)): return .double(Double(number))
        case (.double, .text(let text)): return NumericText.double(text).map { .double($0) }
        case (.text, .integer), (.text, .double): return .text(text(of: value))
        case (.bool, .bool), (.decimal, .decimal), (.blob, .blob), (.date, .date), (.uuid, .uuid):
            return value
        case (.url, .text), (.json, .text): return value
        default: return nil
        }
    }

    /// `value` as SQL's `CAST(… AS text)` spells it.
    private static func text(of value: StoredValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .double(let number):
            number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) + ".0" : String(number)
        case .text(let text): text
        default: value.excerpt  // for messages only: other kinds do not convert to text here
        }
    }
}
