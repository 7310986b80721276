import Depot

/// The writer of an open ``SQLStore`` transaction: every call runs on the transaction's
/// connection, and reads through it see the transaction's writes.
package final class SQLWriter<Engine: SQLEngine>: StoreWriter, SQLRunning {
    let books = WriterBookkeeping()
    let store: SQLStore<Engine>
    let connection: SQLStore<Engine>.Connection
    /// Whether one store-level call is the whole transaction (`StoreCall`): it rolls back on any
    /// failure, so its writes need no savepoints of their own.
    let isWholeCall: Bool

    init(store: SQLStore<Engine>, connection: SQLStore<Engine>.Connection, isWholeCall: Bool = false) {
        self.store = store
        self.connection = connection
        self.isWholeCall = isWholeCall
    }

    var renderer: SQLRenderer { store.renderer }

    /// Ends the transaction: later calls throw. Returns the tables written and created.
    @discardableResult
    func end() -> WriterBookkeeping.Written { books.end() }

    /// Checks that the search indexes `predicate` and `ordering` read exist, and folds their
    /// queues: a search inside the transaction sees its own writes.
    func searchReady(_ predicate: PredicateNode?, ordering: [OrderTerm] = [], table: TableDescription) async throws {
        let searched = try await SearchIndexCheck.require(
            predicate, ordering: ordering, table: table, dialect: renderer.dialect
        ) { try await store.searchIndexExists($0, on: connection) }
        try await foldSearchQueues(searched)
    }

    /// Whether `table` exists inside this transaction; creates it when `create` is true.
    ///
    /// Tables this transaction created or adopted are only remembered store-wide once it commits.
    func ready(_ table: TableDescription, create: Bool) async throws -> Bool {
        if books.hasCreated(table) { return true }
        switch try await store.prepareTable(table, on: connection, create: create) {
        case .exists: return true
        case .prepared:
            books.created(table)
            return true
        case .missing: return false
        }
    }

    package func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try books.checkActive()
        try query.validate()
        guard let query = try await query.resolved(exists: { try await ready($0, create: false) }) else {
            return try StoredRowsCursor.empty(read)
        }
        try await searchReady(query.predicate, ordering: query.ordering, table: query.table)
        return try await connection.scan(renderer.select(query), table: query.resultTable, read)
    }

    package func count(_ query: SelectQuery) async throws -> Int {
        try books.checkActive()
        try query.validate()
        guard let query = try await query.resolved(exists: { try await ready($0, create: false) }) else { return 0 }
        try await searchReady(query.predicate, table: query.table)
        return try await connection.count(renderer.count(query))
    }

    package func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try books.checkActive()
        try query.validate()
        guard let query = try await query.resolved(exists: { try await ready($0, create: false) }) else {
            return query.emptyResult
        }
        try await searchReady(query.predicate, table: query.table)
        return try await renderer.run(query, on: connection)
    }

    /// Runs a hand-written statement in the transaction. It may write any table, named or not
    /// (`UPDATE orders …` in plain text, a trigger, a function), so the commit tells every
    /// observer to read again.
    package func rows(_ statement: SQL) async throws -> SQLRows {
        try books.checkActive()
        let rendered = try renderer.render(statement)
        books.touchedAnything()
        return try await connection.rows(rendered)
    }

    package func scan<Result: Sendable>(
        _ statement: SQL, shapedAs table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try books.checkActive()
        let rendered = try renderer.render(statement, shapedAs: table)
        books.touchedAnything()
        return try await connection.scan(rendered, table: table, read)
    }

    package func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        try books.checkActive()
        let keyPositions = try table.keyPositions(inWrite: rows)
        if table.writeChangesNothing(rows, mode: mode) { return 0 }
        _ = try await ready(table, create: true)
        // A batch is all or nothing on its own, whoever writes it: several rows may take several
        // statements (SQLite steps one per row), so a failure at row k must take rows 1…k-1 back.
        // When the call is the whole transaction, its rollback does.
        let connection = connection
        let renderer = renderer
        let write = { @Sendable in
            try await connection.write(rows, into: table, mode: mode, keyPositions: keyPositions, renderer: renderer)
        }
        let written: Int
        if rows.count <= 1 {
            written = try await write()
        } else if isWholeCall {
            do {
                written = try await write()
            } catch {
                // Rows 1…k-1 may stand: the transaction must not commit, whoever catches this.
                books.breakTransaction(
                    DepotError(
                        .transaction,
                        "a write of \(table.name) failed part way (\(error)), so nothing of the transaction is kept",
                        table: table.name, underlying: error))
                throw error
            }
        } else {
            written = try await withSavepoint(write)
        }
        if written > 0 { books.touched(table, rows: rows, keyPositions: keyPositions) }
        return written
    }

    package func update(_ query: UpdateQuery) async throws -> Int {
        try books.checkActive()
        try query.validate()
        guard try await ready(query.table, create: false) else { return 0 }
        var resolved = query
        resolved.predicate = try await query.predicate?.resolvingSubqueries { try await ready($0, create: false) }
        try await searchReady(resolved.predicate, table: query.table)
        let changed: Int
        do {
            changed = try await connection.execute(renderer.update(resolved), as: .write)
        } catch let error as DepotError where error.kind == .overflow && error.column == nil {
            let column = query.assignments.first { if case .adding = $0.value { true } else { false } }?.column
            throw DepotError(
                .overflow, "an update of \(query.table.name) makes column \(column ?? "?") overflow",
                table: query.table.name, column: column, underlying: error)
        }
        if changed > 0 { books.touched(resolved) }
        return changed
    }

    package func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try books.checkActive()
        try predicate?.validate(against: table)
        guard try await ready(table, create: false) else { return 0 }
        let resolved = try await predicate?.resolvingSubqueries { try await ready($0, create: false) }
        try await searchReady(resolved, table: table)
        let removed = try await connection.execute(renderer.delete(from: table, where: resolved), as: .delete)
        if removed > 0 { books.touched(table, where: resolved) }
        return removed
    }

    package func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try books.checkActive()
        return try await withSavepoint { try await body(self) }
    }

    /// Runs `body` inside a savepoint: what it wrote is undone if it throws, and the transaction
    /// goes on. A savepoint that cannot be rolled back breaks the transaction (it must not commit).
    private func withSavepoint<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let (name, mark) = books.savepoint()
        try await connection.execute(renderer.savepoint(name))
        do {
            let result = try await body()
            try await connection.execute(renderer.releaseSavepoint(name))
            return result
        } catch {
            let connection = connection
            let renderer = renderer
            do {
                try await SQLStore<Engine>.uncancelled {
                    try await connection.execute(renderer.rollbackToSavepoint(name))
                    return try await connection.execute(renderer.releaseSavepoint(name))
                }
            } catch let undoError {
                // The failed call's writes may still be in the transaction: it must not commit.
                let broken: DepotError
                if let lost = undoError as? DepotError, lost.kind == .connection {
                    // The server rolled the transaction back when the connection went: say so as
                    // the connection failure it is (a caller retries those), not as a broken savepoint.
                    broken = DepotError(
                        .connection, lost.message + "; the transaction is lost and nothing it wrote is kept",
                        underlying: error)
                } else {
                    broken = DepotError(
                        .transaction,
                        "a failed call could not be undone inside its transaction (rolling back to its savepoint "
                            + "failed), so the whole transaction is rolled back and nothing it wrote is kept",
                        underlying: undoError)
                }
                books.breakTransaction(broken)
                // A cancelled task's statement may take the transaction down with it (SQLite rolls
                // back one it interrupts): the caller asked for that, and hears it as such.
                throw error is CancellationError ? error : broken
            }
            books.rollBack(to: mark)
            throw error
        }
    }
}

extension SQLWriter: SQLMigrationSession {
    package var dialect: any SQLDialect { renderer.dialect }

    package func execute(_ statement: SQLStatement) async throws {
        try books.checkActive()
        try await connection.execute(statement)
    }

    package func executeScript(_ sql: String) async throws {
        try books.checkActive()
        try await connection.executeScript(sql)
    }

    package func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        try books.checkActive()
        return try await connection.texts(statement)
    }

    package func adopt(_ table: TableDescription) async throws {
        try books.checkActive()
        try await store.engine.adopt(table, on: connection.base)
    }

    /// On a reader of the server this transaction writes to (never a replica, which would not
    /// see this session).
    package func textsElsewhere(_ statement: SQLStatement) async throws -> [[String?]] {
        try await store.withReader(primary: true) { try await $0.texts(statement) }
    }

    /// Migrations of one database take turns, across stores and processes, until this
    /// transaction ends (PostgreSQL: an advisory lock; SQLite: `BEGIN IMMEDIATE` did already).
    package func lockForMigration() async throws {
        if let lock = renderer.migrationLock { try await execute(lock) }
    }
}
