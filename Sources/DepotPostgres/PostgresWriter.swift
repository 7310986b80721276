import Depot
import DepotSQL
import PostgresNIO

/// The writer of an open PostgreSQL transaction: every call runs on the transaction's connection.
final class PostgresWriter: StoreWriter {
    let books = WriterBookkeeping()
    let store: PostgresStore
    let connection: PostgresConnection

    /// Rows per statement in batch writes: arrays keep the parameter count at the column count,
    /// so the limit is memory per message, not PostgreSQL's 65,535 parameters.
    static let rowsPerStatement = 5_000

    init(store: PostgresStore, connection: PostgresConnection) {
        self.store = store
        self.connection = connection
    }

    /// Ends the transaction: later calls throw. Returns the tables written and created.
    @discardableResult
    func end() -> (touched: Set<String>, created: Set<TableDescription>) { books.end() }

    /// Whether `table` exists (created when `create`); its errors arrive as ``DepotError``s.
    private func ready(_ table: TableDescription, create: Bool) async throws -> Bool {
        if books.hasCreated(table) { return true }
        switch try await mapped({ try await store.prepareTable(table, on: connection, create: create) }) {
        case .exists: return true
        case .created:
            books.created(table)
            return true
        case .missing: return false
        }
    }

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try books.checkActive()
        try query.validate()
        guard let query = try await query.resolved(exists: { try await ready($0, create: false) }) else {
            return try StoredRowsCursor.empty(read)
        }
        return try await mapped {
            try await PostgresOperations.scan(store.renderer.select(query), table: query.table, on: connection, read)
        }
    }

    func count(_ query: SelectQuery) async throws -> Int {
        try books.checkActive()
        try query.validate()
        guard let query = try await query.resolved(exists: { try await ready($0, create: false) }) else { return 0 }
        return try await mapped {
            try await PostgresOperations.count(store.renderer.count(query), on: connection)
        }
    }

    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        try books.checkActive()
        let keyPositions = try table.keyPositions(inWrite: rows.columns)
        if table.writeChangesNothing(rows, mode: mode) { return 0 }
        try Self.rejectNUL(rows, table: table, keyPositions: keyPositions)
        _ = try await ready(table, create: true)
        let plan = store.renderer.arrayWrite(into: table, columns: rows.columns, mode: mode)
        let width = rows.columns.count
        var start = 0
        var written = 0
        while start < rows.count {
            let end = min(start + Self.rowsPerStatement, rows.count)
            let values = rows.values[(start * width)..<(end * width)]
            var binds = PostgresBindings(capacity: plan.parameters.count)
            for parameter in plan.parameters {
                switch parameter {
                case .column(let position, let type):
                    binds.append(
                        PostgresArrayParameter(
                            values: values, width: width, position: position, type: type, folded: false))
                case .folded(let position):
                    binds.append(
                        PostgresArrayParameter(
                            values: values, width: width, position: position, type: .text, folded: true))
                }
            }
            do {
                written += try await PostgresOperations.affectedRows(
                    PostgresQuery(unsafeSQL: plan.sql, binds: binds), on: connection)
            } catch {
                throw PostgresErrors.write(error, table: table, address: store.configuration.address)
            }
            start = end
        }
        books.touched(table.name)
        return written
    }

    /// PostgreSQL text cannot hold U+0000 (SQLite can): such a value fails here, naming the row
    /// and column, before anything of the batch is sent.
    static func rejectNUL(_ rows: RowBatch, table: TableDescription, keyPositions: [Int]) throws {
        let width = rows.columns.count
        for (position, name) in rows.columns.enumerated() {
            var index = position
            while index < rows.values.count {
                if case .text(let text) = rows.values[index], text.utf8.contains(0) {
                    let row = rows.row(index / width)
                    let key = keyPositions.map { row[row.startIndex + $0] }
                    throw DepotError(
                        .constraintViolation,
                        "\(table.name) row \(TableDescription.describeKey(key)): column \(name) holds a NUL "
                            + "character (U+0000), which PostgreSQL text cannot store",
                        table: table.name, column: name)
                }
                index += width
            }
        }
    }

    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try books.checkActive()
        guard try await ready(table, create: false) else { return 0 }
        let resolved = try await predicate?.resolvingSubqueries { try await ready($0, create: false) }
        let statement = store.renderer.delete(from: table, where: resolved)
        let removed = try await mapped {
            try await PostgresOperations.count(
                SQLStatement(
                    sql: "WITH removed AS (\(statement.sql) RETURNING 1) SELECT COUNT(*) FROM removed",
                    arguments: statement.arguments),
                on: connection)
        }
        if removed > 0 { books.touched(table.name) }
        return removed
    }

    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try books.checkActive()
        let (name, mark) = books.savepoint()
        try await mapped { try await PostgresOperations.run("SAVEPOINT \(name)", on: connection) }
        do {
            let result = try await body(self)
            try await mapped { try await PostgresOperations.run("RELEASE SAVEPOINT \(name)", on: connection) }
            return result
        } catch {
            let connection = connection
            try? await Task.detached {
                try await PostgresOperations.run("ROLLBACK TO SAVEPOINT \(name)", on: connection)
                try await PostgresOperations.run("RELEASE SAVEPOINT \(name)", on: connection)
            }.value
            books.rollBack(to: mark)
            throw error
        }
    }

    func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw PostgresErrors.map(error, address: store.configuration.address)
        }
    }
}

extension PostgresWriter: SQLMigrationSession {
    var dialect: SQLDialect { .postgres }

    func execute(_ statement: SQLStatement) async throws {
        try books.checkActive()
        try await mapped { try await PostgresOperations.run(PostgresOperations.query(statement), on: connection) }
    }

    func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        try books.checkActive()
        return try await mapped {
            var rows: [[String?]] = []
            for try await row in try await connection.query(
                PostgresOperations.query(statement), logger: PostgresOperations.logger)
            {
                rows.append(try row.map { cell in try cell.decode(String?.self) })
            }
            return rows
        }
    }

    /// Migrations of one database take turns, across stores and processes, until this
    /// transaction ends.
    func lockForMigration() async throws {
        try await execute(SQLStatement(sql: "SELECT pg_advisory_xact_lock(74118002)", arguments: []))
    }
}
