import Depot
import DepotSQL
import GRDB

/// The writer of an open SQLite transaction: every call runs on the writer connection, inside
/// the transaction `SQLiteStore.transaction` began.
final class SQLiteWriter: StoreWriter {
    let books = WriterBookkeeping()
    let store: SQLiteStore

    init(store: SQLiteStore) {
        self.store = store
    }

    /// Ends the transaction: later calls throw. Returns the tables written and created.
    @discardableResult
    func end() -> (touched: Set<String>, created: Set<TableDescription>) { books.end() }

    /// Whether `table` exists inside this transaction; creates it when `create` is true.
    ///
    /// Tables this transaction created are only remembered store-wide once it commits.
    private func ready(_ table: TableDescription, _ db: Database, create: Bool) throws -> Bool {
        if books.hasCreated(table) { return true }
        if try store.tableIsReady(table, in: db, create: false) { return true }
        guard create else { return false }
        _ = try store.tableIsReady(table, in: db, create: true)
        books.created(table)
        return true
    }

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try books.checkActive()
        try query.validate()
        return try await store.onWriter { db in
            guard let query = try query.resolved(exists: { try self.ready($0, db, create: false) }) else {
                return try StoredRowsCursor.empty(read)
            }
            return try SQLiteOperations.scan(self.store.renderer.select(query), table: query.table, db: db, read)
        }
    }

    func count(_ query: SelectQuery) async throws -> Int {
        try books.checkActive()
        try query.validate()
        return try await store.onWriter { db in
            guard let query = try query.resolved(exists: { try self.ready($0, db, create: false) }) else { return 0 }
            return try SQLiteOperations.count(self.store.renderer.count(query), db: db)
        }
    }

    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        try books.checkActive()
        let keyPositions = try table.keyPositions(inWrite: rows.columns)
        if table.writeChangesNothing(rows, mode: mode) { return 0 }
        let sql = store.renderer.insert(into: table, columns: rows.columns, mode: mode)
        let written = try await store.onWriter { db in
            _ = try self.ready(table, db, create: true)
            return try SQLiteOperations.write(rows, sql: sql, table: table, keyPositions: keyPositions, db: db)
        }
        books.touched(table.name)
        return written
    }

    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try books.checkActive()
        let removed = try await store.onWriter { db -> Int in
            guard try self.ready(table, db, create: false) else { return 0 }
            let resolved = try predicate?.resolvingSubqueries { try self.ready($0, db, create: false) }
            let statement = self.store.renderer.delete(from: table, where: resolved)
            try db.execute(sql: statement.sql, arguments: try SQLiteOperations.arguments(statement.arguments))
            return db.changesCount
        }
        if removed > 0 { books.touched(table.name) }
        return removed
    }

    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try books.checkActive()
        let (name, mark) = books.savepoint()
        try await store.onWriter { db in try db.execute(sql: "SAVEPOINT \(name)") }
        do {
            let result = try await body(self)
            try await store.onWriter { db in try db.execute(sql: "RELEASE \(name)") }
            return result
        } catch {
            try? await store.runUncancelled { db in
                try db.execute(sql: "ROLLBACK TO \(name)")
                try db.execute(sql: "RELEASE \(name)")
            }
            books.rollBack(to: mark)
            throw error
        }
    }
}

extension SQLiteWriter: SQLMigrationSession {
    var dialect: SQLDialect { .sqlite }

    func execute(_ statement: SQLStatement) async throws {
        try books.checkActive()
        let arguments = try SQLiteOperations.arguments(statement.arguments)
        try await store.onWriter { db in try db.execute(sql: statement.sql, arguments: arguments) }
    }

    func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        try books.checkActive()
        let arguments = try SQLiteOperations.arguments(statement.arguments)
        return try await store.onWriter { db in
            try Row.fetchAll(db, sql: statement.sql, arguments: arguments).map { row in
                row.databaseValues.map { value -> String? in
                    switch value.storage {
                    case .null: nil
                    case .int64(let number): String(number)
                    case .double(let number): "\(number)"
                    case .string(let text): text
                    case .blob(let data): String(decoding: data, as: UTF8.self)
                    }
                }
            }
        }
    }

    func lockForMigration() async throws {}  // transactions are BEGIN IMMEDIATE: one writer at a time
}
