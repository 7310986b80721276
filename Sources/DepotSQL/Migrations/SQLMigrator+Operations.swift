import Depot
import Foundation

extension SQLMigrator {
    /// Carries out one operation inside the step's transaction.
    static func apply(
        _ operation: MigrationOperation, _ session: any SQLMigrationSession, _ writer: any StoreWriter
    ) async throws {
        let dialect = session.dialect
        let renderer = SQLRenderer(dialect: dialect)
        switch operation.action {
        case .createTable(let table):
            for statement in renderer.createTableWithIndexes(table) {
                try await session.execute(statement)
            }
            try await session.adopt(table)
        case .dropTable(let table):
            // Its search indexes go with it: a table created again under the name has none.
            for column in try await searchIndexes(of: table, session) {
                try await dropSearchIndex(table, column, session)
            }
            try await session.execute(renderer.dropTable(table))
        case .renameTable(let from, let to):
            guard try await columns(of: to, session).isEmpty else {
                throw DepotError(.migration, "table '\(to)' exists already", table: to)
            }
            try await keepingSearchIndexes(of: from, renamedTo: to, session) {
                try await session.execute(renderer.renameTable(from, to: to))
            }
        case .addColumn(let table, let column, let value):
            if !column.isNullable && value == nil {
                throw DepotError(
                    .migration,
                    "adding NOT NULL column '\(column.name)' to '\(table)' needs a default for existing rows",
                    table: table, column: column.name)
            }
            try await requireColumns(absent: [column.name], in: table, session)
            try await session.execute(try renderer.addColumn(column, to: table, default: value))
        case .dropColumn(let table, let column):
            try await requireColumns(present: [column], in: table, session)
            try await keepingSearchIndexes(of: table, dropping: column, session) {
                try await session.execute(renderer.dropColumn(column, from: table))
            }
            try await dropLegacyFoldedCopy(of: column, in: table, session)
        case .renameColumn(let table, let from, let to):
            try await requireColumns(present: [from], absent: [to], in: table, session)
            try await keepingSearchIndexes(of: table, renaming: [from: to], session) {
                try await session.execute(renderer.renameColumn(from, to: to, in: table))
            }
            try await dropLegacyFoldedCopy(of: from, in: table, session)
        case .alterColumn(let table, let column):
            try await keepingSearchIndexes(of: table, session) {
                try await alterColumn(table, column, session)
            }
        case .createIndex(let index) where index.isUnique:
            // A search index's triggers record the rows a REPLACE removes through each unique index.
            try await keepingSearchIndexes(of: index.table, session) {
                try await session.execute(renderer.createIndex(index))
            }
        case .createIndex(let index):
            try await session.execute(renderer.createIndex(index))
        case .dropIndex(let name):
            try await session.execute(renderer.dropIndex(name))
        case .createSearchIndex(let table, let column):
            let stored = try await columns(of: table.name, session)
            guard !stored.isEmpty else { throw DepotError(.migration, "no table '\(table.name)'", table: table.name) }
            try TextSearch.checkIndexable(table, column: column)
            try await createSearchIndex(table, column, session)
        case .dropSearchIndex(let table, let column):
            try await dropSearchIndex(table.name, column, session)
        case .storeSpecific(let specific):
            guard let scripts = specific as? SQLScripts else {
                throw DepotError(.migration, "a SQL store cannot carry out '\(specific)'")
            }
            guard let text = scripts.script(for: dialect) else {
                throw DepotError(.migration, "the step has no SQL for \(dialect.displayName)")
            }
            try await session.executeScript(text)
        case .data(_, let body):
            try await body(Transaction(writer: writer))
        }
    }

    /// Refuses a step on a column of `present` that is missing or one of `absent` that is there
    /// already (or on a missing table), with the in-memory store's words, before the engine
    /// answers in its own; returns the names of the stored columns.
    @discardableResult
    static func requireColumns(
        present: [String] = [], absent: [String] = [], in table: String, _ session: any SQLMigrationSession
    ) async throws -> Set<String> {
        let stored = Set(try await columns(of: table, session).map(\.name))
        guard !stored.isEmpty else { throw DepotError(.migration, "no table '\(table)'", table: table) }
        if let missing = present.first(where: { !stored.contains($0) }) {
            throw DepotError(.migration, "table '\(table)' has no column '\(missing)'", table: table, column: missing)
        }
        if let taken = absent.first(where: { stored.contains($0) }) {
            throw DepotError(.migration, "table '\(table)' has a column '\(taken)' already", table: table)
        }
        return stored
    }

    /// The stored columns of `table`, as the catalog describes them (empty: no such table).
    static func columns(of table: String, _ session: any SQLMigrationSession) async throws -> [CatalogColumn] {
        SQLRenderer.catalogColumns(
            try await session.texts(SQLRenderer(dialect: session.dialect).catalogColumns(of: table)))
    }

    /// Changes a column's type or nullability: `ALTER COLUMN` on PostgreSQL; on SQLite, which
    /// cannot, the table is rebuilt (new table, copy, drop, rename, indexes recreated). Values
    /// are checked first, so both engines refuse the same data with the same message.
    static func alterColumn(
        _ table: String, _ column: TableDescription.ColumnDescription, _ session: any SQLMigrationSession
    ) async throws {
        let dialect = session.dialect
        let stored = try await columns(of: table, session)
        guard stored.contains(where: { $0.name == column.name }) else {
            throw DepotError(
                .migration, "table '\(table)' has no column '\(column.name)'", table: table, column: column.name)
        }
        try await checkConvertible(table, column, session)
        let fromText = stored.first { $0.name == column.name }?.type.lowercased() == "text"
        if let statements = dialect.alterColumn(column, in: table, fromText: fromText) {
            for statement in statements { try await session.execute(statement) }
            try await dropLegacyFoldedCopy(of: column.name, in: table, session)
        } else {
            try await rebuildSQLiteTable(table, changing: column, stored: stored, session)
        }
    }

    /// Refuses values the new column cannot hold — NULLs for NOT NULL, text that is not a number
    /// for a numeric type, a fractional number for an integer — naming the column and how many.
    static func checkConvertible(
        _ table: String, _ column: TableDescription.ColumnDescription, _ session: any SQLMigrationSession
    ) async throws {
        let renderer = SQLRenderer(dialect: session.dialect)
        if !column.isNullable {
            let nulls = try await session.texts(renderer.countNulls(in: column.name, of: table))
            if let count = nulls.first?.first ?? nil, count != "0" {
                throw DepotError(
                    .migration,
                    "column '\(column.name)' of '\(table)' cannot become NOT NULL: \(count) row(s) hold NULL",
                    table: table, column: column.name)
            }
        }
        guard column.type == .integer || column.type == .double else { return }
        let values = try await session.texts(renderer.nonNullTexts(of: column.name, in: table))
        var bad = 0
        var example: String?
        for row in values {
            guard let text = row[0] else { continue }
            let fits =
                column.type == .integer ? NumericText.integer(text) != nil : NumericText.double(text) != nil
            if !fits {
                bad += 1
                example = example ?? text
            }
        }
        if bad > 0 {
            throw DepotError(
                .migration,
                "column '\(column.name)' of '\(table)' cannot become \(column.type.rawValue): \(bad) value(s) do not "
                    + "convert (e.g. '\(example ?? "")')", table: table, column: column.name)
        }
    }

    /// Drops the folded copy of `column` an earlier Depot kept on PostgreSQL, if `table` has one
    /// (``SQLNames/legacyFoldedColumn(_:)``): the server folds now.
    static func dropLegacyFoldedCopy(of column: String, in table: String, _ session: any SQLMigrationSession)
        async throws
    {
        guard let statement = session.dialect.dropLegacyFoldedCopy(of: column, in: table) else { return }
        try await session.execute(statement)
    }
}

// MARK: - Search indexes through schema changes

extension SQLMigrator {
    /// The columns of `table` that have a search index, from the search indexes the catalog
    /// lists (``SQLDialect/searchIndexCatalog``).
    static func searchIndexes(of table: String, _ session: any SQLMigrationSession) async throws -> [String] {
        let prefix = table + "#"
        let suffix = "#words"
        return try await session.texts(session.dialect.searchIndexCatalog).compactMap { row in
            guard let name = row.first ?? nil, name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
            let column = name.dropFirst(prefix.count).dropLast(suffix.count)
            return column.isEmpty || column.contains("#") ? nil : String(column)
        }
    }

    /// The current schema on PostgreSQL (where a search index's functions live), `nil` on SQLite.
    private static func currentSchema(_ session: any SQLMigrationSession) async throws -> String? {
        guard let query = session.dialect.currentSchema else { return nil }
        guard let schema = try await session.texts(query).first?.first ?? nil else {
            throw DepotError(.migration, "PostgreSQL has no current schema to hold the search index's functions")
        }
        return schema
    }

    static func createSearchIndex(
        _ table: TableDescription, _ column: String, _ session: any SQLMigrationSession
    ) async throws {
        if let refusal = session.dialect.searchIndexRefusal(on: table.name),
            let found = try await session.texts(refusal.query).first?.first ?? nil, found != "0"
        {
            throw DepotError(.migration, refusal.reason, table: table.name, column: column)
        }
        let schema = try await currentSchema(session)
        // The table's unique indexes as the catalog has them, for triggers that record the rows
        // a REPLACE removes through them (SQLite).
        var described = table
        if let uniques = session.dialect.searchReplacingIndexes(of: table.name) {
            described.indexes = []
            for row in try await session.texts(uniques) {
                guard let name = row[0] else { continue }
                let columns = try await session.texts(session.dialect.catalogIndexColumns(of: name)).compactMap {
                    $0[0]
                }
                // An index on expressions only names no column to compare; the key still does.
                guard !columns.isEmpty else { continue }
                described.indexes.append(
                    IndexDescription(name: name, table: table.name, columns: columns, isUnique: true))
            }
        }
        let statements = SQLRenderer(dialect: session.dialect).createSearchIndex(
            on: described, column: column, schema: schema)
        if let report = MigrationRowReporting.report, let build = session.dialect.searchIndexBuildProgress(on: table) {
            try await following(build, of: session, report: report) {
                for statement in statements { try await session.execute(statement) }
            }
        } else {
            for statement in statements { try await session.execute(statement) }
        }
        guard let fill = session.dialect.searchIndexFill(on: described, column: column) else { return }
        // Batches in rowid order, each reported (`MigrationProgress.rows`) when someone shows progress.
        let report = MigrationRowReporting.report
        var total = 0
        if report != nil, let counted = try await session.texts(fill.count).first?.first ?? nil {
            total = Int(counted) ?? 0
        }
        var (after, done) = (Int64.min, 0)
        while let next = try await session.texts(fill.next(after, searchIndexBatch)).first,
            let last = next[0].flatMap({ Int64($0) })
        {
            try await session.execute(fill.fill(after, searchIndexBatch))
            done += next[1].flatMap { Int($0) } ?? 0
            after = last
            report?(done, max(total, done))
        }
    }

    /// How many rows a batch of a search index's fill reads.
    static let searchIndexBatch = 20_000

    /// How often another connection asks how far a search index's build has come.
    static let searchIndexBuildPoll: Duration = .milliseconds(250)

    /// Runs `create` (the statements that create and build a search index), reporting the rows
    /// read so far as `MigrationProgress.rows` while it runs, as another connection reads them
    /// from `build` every ``searchIndexBuildPoll`` (the table's blocks read, in proportion to its
    /// rows), and all of them when it ends. Following is best effort: a failing poll stops
    /// following and never fails the step.
    private static func following(
        _ build: SearchIndexBuildProgress, of session: any SQLMigrationSession,
        report: @escaping @Sendable (_ done: Int, _ total: Int) -> Void, _ create: () async throws -> Void
    ) async throws {
        // Without a count or the backend's identity there is nothing true to report while it
        // runs, nor at the end: the step runs unfollowed.
        guard let counted = try await session.texts(build.count).first?.first ?? nil, let total = Int(counted),
            let backend = try await session.texts(build.backend).first?.first ?? nil
        else {
            return try await create()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var reported = 0
                while true {
                    try await Task.sleep(for: searchIndexBuildPoll)
                    guard let row = try? await session.textsElsewhere(build.progress(backend)) else { return }
                    guard let read = row.first, let done = read[0].flatMap({ Double($0) }),
                        let blocks = read[1].flatMap({ Double($0) }), blocks > 0
                    else { continue }
                    // Never all of them before the statement ends, never backwards.
                    let rows = min(total - 1, Int(Double(total) * min(done / blocks, 1)))
                    guard rows > reported else { continue }
                    reported = rows
                    report(rows, total)
                }
            }
            defer { group.cancelAll() }
            try await create()
            group.cancelAll()
            // A poll's report under way ends before the last one.
            try? await group.waitForAll()
        }
        report(total, total)
    }

    static func dropSearchIndex(_ table: String, _ column: String, _ session: any SQLMigrationSession) async throws {
        let schema = try await currentSchema(session)
        let described = TableDescription(name: table, entityName: table, columns: [], primaryKey: [])
        for statement in SQLRenderer(dialect: session.dialect).dropSearchIndex(
            on: described, column: column, schema: schema)
        {
            try await session.execute(statement)
        }
    }

    /// Drops the search index of `column` of `table` and builds it again over the table as the
    /// catalog stores it.
    static func rebuildSearchIndex(
        of table: String, _ column: String, _ session: any SQLMigrationSession
    ) async throws {
        try await dropSearchIndex(table, column, session)
        let described = try await storedDescription(of: table, session)
        try TextSearch.checkIndexable(described, column: column)
        try await createSearchIndex(described, column, session)
    }

    /// `table` as the catalog stores it, to build a search index over.
    private static func storedDescription(of table: String, _ session: any SQLMigrationSession) async throws
        -> TableDescription
    {
        let stored = try await columns(of: table, session)
        guard !stored.isEmpty else { throw DepotError(.migration, "no table '\(table)'", table: table) }
        let dialect = session.dialect
        return TableDescription(
            name: table, entityName: table,
            columns: stored.map {
                TableDescription.ColumnDescription(
                    name: $0.name, type: ColumnType(rawValue: dialect.depotTypeName(fromCatalog: $0.type)) ?? .text,
                    isNullable: !$0.isNotNull)
            },
            primaryKey: stored.filter { $0.keyPosition > 0 }.sorted { $0.keyPosition < $1.keyPosition }.map(\.name))
    }

    /// Runs `change` (a schema change of `table`) with its search indexes taken down before and
    /// built again after, under the table's and columns' new names: an index, its triggers and
    /// queue name the table and columns, and a renamed or rebuilt table would leave them orphaned
    /// or misnamed (updated under the old name, or firing on a column that is gone). The index of
    /// a dropped column is dropped with it.
    static func keepingSearchIndexes(
        of table: String, renamedTo newName: String? = nil, renaming columns: [String: String] = [:],
        dropping dropped: String? = nil, _ session: any SQLMigrationSession,
        _ change: () async throws -> Void
    ) async throws {
        let indexed = try await searchIndexes(of: table, session)
        for column in indexed { try await dropSearchIndex(table, column, session) }
        try await change()
        guard !indexed.isEmpty else { return }
        let described = try await storedDescription(of: newName ?? table, session)
        for column in indexed where column != dropped {
            let name = columns[column] ?? column
            try TextSearch.checkIndexable(described, column: name)
            try await createSearchIndex(described, name, session)
        }
    }
}
