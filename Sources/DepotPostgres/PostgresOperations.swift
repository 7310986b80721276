import Depot
import DepotSQL
import Foundation
import Logging
import PostgresNIO

/// The statements a PostgreSQL connection runs for Depot.
enum PostgresOperations {
    static let logger: Logger = {
        var logger = Logger(label: "depot.postgres")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs a statement and returns how many rows it affected (its command tag's count).
    static func affectedRows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> Int {
        let metadata = try await connection.query(query, logger: logger, { _ in }).get()
        return metadata.rows ?? 0
    }

    /// A rendered statement with its arguments bound.
    static func query(_ statement: SQLStatement) -> PostgresQuery {
        var binds = PostgresBindings(capacity: statement.arguments.count)
        for argument in statement.arguments {
            if case .null = argument {
                binds.appendNull()
            } else {
                binds.append(PostgresParameter(value: argument))
            }
        }
        return PostgresQuery(unsafeSQL: statement.sql, binds: binds)
    }

    /// Runs a rendered `SELECT`, receives every row, then hands them to `read` through a cursor.
    static func scan<Result: Sendable>(
        _ statement: SQLStatement, table: TableDescription, on connection: PostgresConnection,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        let width = table.columns.count
        var rows = try await connection.query(query(statement), logger: logger).makeAsyncIterator()
        // A result that fits in one buffer is read as it is, on the caller's task.
        var head: [PostgresRow] = []
        while head.count < RowChannel.capacity, let row = try await rows.next() { head.append(row) }
        if head.count < RowChannel.capacity {
            let channel = RowChannel(head)
            channel.finish(nil)
            var cursor: any StoreCursor = PostgresRowCursor(channel: channel, width: width)
            return try read(&cursor)
        }
        // A larger one streams: `read` runs on a thread of its own (the cursor is synchronous and
        // waits there for rows), while this task receives rows, at most `capacity` ahead of it.
        let channel = RowChannel(head)
        async let result: Result = withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var cursor: any StoreCursor = PostgresRowCursor(channel: channel, width: width)
                let outcome = Swift.Result { try read(&cursor) }
                channel.readerFinished()
                continuation.resume(with: outcome)
            }
        }
        do {
            while let row = try await rows.next() {
                guard await channel.push(row) else { break }  // the reader stopped early
            }
            channel.finish(nil)
        } catch {
            channel.finish(error)
        }
        return try await result
    }

    /// Runs a statement returning one integer (a `COUNT(*)`).
    static func count(
        _ statement: SQLStatement, on connection: PostgresConnection
    ) async throws -> Int {
        let rows = try await connection.query(query(statement), logger: logger)
        var count = 0
        for try await row in rows {
            if let cell = row.first, case .integer(let number) = try PostgresWire.read(cell) {
                count = Int(number)
            }
        }
        return count
    }
}

/// A connection of ``PostgresEngine``: a pooled connection, lent for one read or one transaction.
public struct PostgresEngineConnection: SQLConnection {
    let connection: PostgresConnection
    /// The server, for messages.
    let address: String

    /// Rows per statement in batch writes: arrays keep the parameter count at the column count,
    /// so the limit is memory per message, not PostgreSQL's 65,535 parameters.
    static let rowsPerStatement = 5_000

    /// Runs `body`; PostgreSQL's errors arrive as `DepotError`s.
    ///
    /// A connection the server has closed fails at once: PostgresNIO leaves a statement written to a
    /// closed channel waiting forever (seen as a `ROLLBACK` after the server was stopped or a
    /// session killed mid-transaction, which hung the transaction and every writer behind it).
    private func mapped<T>(_ body: () async throws -> T) async throws -> T {
        guard !connection.isClosed else {
            throw DepotError(.connection, "lost the connection to PostgreSQL at \(address) (it is closed)")
        }
        do {
            return try await body()
        } catch {
            throw PostgresErrors.map(error, address: address)
        }
    }

    /// Runs `statement`; returns the count of its command tag (`DELETE 3`: 3).
    @discardableResult
    public func execute(_ statement: SQLStatement) async throws -> Int {
        try await mapped {
            try await PostgresOperations.affectedRows(PostgresOperations.query(statement), on: connection)
        }
    }

    /// Runs `statement` (`COMMIT`) and reads its command tag: `COMMIT` when the transaction
    /// committed, `ROLLBACK` when the server had aborted it (an earlier statement failed) and rolled
    /// it back instead — which PostgreSQL reports without an error.
    public func commit(_ statement: SQLStatement) async throws -> Bool {
        try await mapped {
            let metadata = try await connection.query(
                PostgresOperations.query(statement), logger: PostgresOperations.logger, { _ in }
            ).get()
            return metadata.command == "COMMIT"
        }
    }

    /// Runs the statements of `sql` one after another (`SQLScript.statements(_:)` splits them).
    public func executeScript(_ sql: String) async throws {
        for statement in SQLScript.statements(sql) {
            try await execute(SQLStatement(sql: statement))
        }
    }

    /// The rows of `statement`, each column read as text.
    public func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        try await mapped {
            var rows: [[String?]] = []
            for try await row in try await connection.query(
                PostgresOperations.query(statement), logger: PostgresOperations.logger)
            {
                rows.append(try row.map { cell in try cell.decode(String?.self) })
            }
            return rows
        }
    }

    /// The rows of a hand-written statement, each value by its wire type.
    public func rows(_ statement: SQLStatement) async throws -> SQLRows {
        try await mapped {
            var columns: [String] = []
            var rows: [[StoredValue]] = []
            for try await row in try await connection.query(
                PostgresOperations.query(statement), logger: PostgresOperations.logger)
            {
                if columns.isEmpty { columns = row.map(\.columnName) }
                rows.append(try row.map { cell in try PostgresWire.read(cell) })
            }
            return SQLRows(columns: columns, rows: rows)
        }
    }

    /// Runs a `SELECT`, receives its rows, then hands them to `read` through a cursor.
    public func scan<Result: Sendable>(
        _ statement: SQLStatement, table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await mapped { try await PostgresOperations.scan(statement, table: table, on: connection, read) }
    }

    /// Runs a `SELECT COUNT(*)`.
    public func count(_ statement: SQLStatement) async throws -> Int {
        try await mapped { try await PostgresOperations.count(statement, on: connection) }
    }

    /// Writes the batch: a large one through `COPY` (`PostgresCopy`), others as one array per
    /// column (`PostgresDialect.arrayWrite(into:columns:mode:)`), 5,000 rows per statement.
    ///
    /// - Throws: `.constraintViolation` naming the row and column when a text holds U+0000,
    ///   which PostgreSQL text cannot store (checked before anything is sent, or found while
    ///   copying, which then stops: either way nothing of the batch is written).
    public func write(
        _ rows: RowBatch, into table: TableDescription, mode: WriteMode, keyPositions: [Int], renderer: SQLRenderer
    ) async throws -> Int {
        if PostgresCopy.suits(rows, table: table) {
            guard !connection.isClosed else {
                throw DepotError(.connection, "lost the connection to PostgreSQL at \(address) (it is closed)")
            }
            do {
                if let written = try await copy(rows, into: table, mode: mode) { return written }
            } catch is PostgresCopy.FoundNUL {
                // The copy stopped, writing nothing; this names the row and column.
                try Self.rejectNUL(rows, table: table, keyPositions: keyPositions)
                throw DepotError(.constraintViolation, "\(table.name): a text holds a NUL character (U+0000)")
            } catch {
                throw PostgresErrors.write(error, table: table, address: address)
            }
        }
        try Self.rejectNUL(rows, table: table, keyPositions: keyPositions)
        let plan = PostgresDialect().arrayWrite(into: table, columns: rows.columns, mode: mode)
        let width = rows.columns.count
        var start = 0
        var written = 0
        while start < rows.count {
            let end = min(start + Self.rowsPerStatement, rows.count)
            let values = rows.values[(start * width)..<(end * width)]
            var binds = PostgresBindings(capacity: plan.columnTypes.count)
            for (position, type) in plan.columnTypes.enumerated() {
                binds.append(PostgresArrayParameter(values: values, width: width, position: position, type: type))
            }
            do {
                written += try await PostgresOperations.affectedRows(
                    PostgresQuery(unsafeSQL: plan.sql, binds: binds), on: connection)
            } catch {
                throw PostgresErrors.write(error, table: table, address: address)
            }
            start = end
        }
        return written
    }

    /// Writes a large batch through `COPY`, `PostgresCopy.rowsPerStatement` rows a statement (no
    /// statement runs far longer than the array path's did, under a `statement_timeout`): an insert
    /// straight into the table; an upsert or update into a temporary table of the batch's columns,
    /// then from it by the statement the array path runs. The writer's savepoint undoes all of it
    /// on failure.
    ///
    /// - Returns: The rows written; nil, having sent nothing, for an upsert or update when the role
    ///   may not create temporary tables (`REVOKE TEMPORARY`): the caller binds arrays instead.
    private func copy(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int? {
        let dialect = PostgresDialect()
        func run(_ sql: String) async throws -> Int {
            try await PostgresOperations.affectedRows(PostgresQuery(unsafeSQL: sql), on: connection)
        }
        func copy(_ slice: Range<Int>, into name: String) async throws {
            try await connection.copyFrom(table: name, columns: rows.columns, logger: PostgresOperations.logger) {
                writer in
                try await PostgresCopy.encode(rows, slice) { buffer in
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
        }
        let slices = stride(from: 0, to: rows.count, by: PostgresCopy.rowsPerStatement).map {
            $0..<min($0 + PostgresCopy.rowsPerStatement, rows.count)
        }
        if mode == .insert {
            // COPY writes every row or fails: the count is the rows sent (a table's BEFORE trigger
            // that drops a row, and rules, which COPY does not run, are not counted apart).
            for slice in slices { try await copy(slice, into: table.name) }
            return rows.count
        }
        let permitted = try await connection.query(
            "SELECT has_database_privilege(current_database(), 'TEMPORARY')", logger: PostgresOperations.logger)
        var mayStage = false
        for try await flag in permitted.decode(Bool.self) { mayStage = flag }
        guard mayStage else { return nil }
        // One per batch shape and transaction, emptied after each use: repeated staged writes
        // neither pile up tables (and their locks) nor churn the catalog. Its name has a space, so
        // no Depot table has it; temporary tables are found first on the search path.
        let name = PostgresCopy.stagingTable(for: table, columns: rows.columns)
        let stage = "pg_temp." + dialect.quote(name)
        _ = try await run(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(dialect.quote(name)) ON COMMIT DROP AS SELECT "
                + rows.columns.map(dialect.quote).joined(separator: ", ")
                + " FROM \(dialect.quote(table.name)) WITH NO DATA")
        let statement = dialect.batchWrite(into: table, columns: rows.columns, mode: mode, from: stage)
        var written = 0
        for slice in slices {
            try await copy(slice, into: name)
            written += try await run(statement)
            _ = try await run("TRUNCATE \(stage)")
        }
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
}

/// Received rows, decoded one row at a time as the cursor reaches it.
/// The rows of a result for its cursor: all of a small result, or those the receiving task hands
/// to the thread a large (streamed) result is read on, at most ``capacity`` waiting, so memory
/// stays bounded however many rows the query returns.
final class RowChannel: @unchecked Sendable {
    /// Rows received ahead of the reader, at most.
    static let capacity = 1_024

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var buffer: [PostgresRow]
    private var start = 0
    private var finished = false
    private var failure: (any Error)?
    private var readerDone = false
    private var waitingProducer: CheckedContinuation<Bool, Never>?

    init(_ head: [PostgresRow]) { buffer = head }

    /// Hands `row` to the reader, waiting while the buffer is full; false once the reader stopped.
    func push(_ row: PostgresRow) async -> Bool {
        await withCheckedContinuation { continuation in
            condition.lock()
            if readerDone {
                condition.unlock()
                continuation.resume(returning: false)
            } else if buffer.count - start < Self.capacity {
                buffer.append(row)
                condition.signal()
                condition.unlock()
                continuation.resume(returning: true)
            } else {
                buffer.append(row)  // kept; the producer waits until the reader makes room
                waitingProducer = continuation
                condition.signal()
                condition.unlock()
            }
        }
    }

    /// The stream ended (with `error` when it failed).
    func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.signal()
        condition.unlock()
    }

    /// The reader returned: the producer stops at its next row.
    func readerFinished() {
        condition.lock()
        readerDone = true
        let producer = waitingProducer
        waitingProducer = nil
        condition.unlock()
        producer?.resume(returning: false)
    }

    /// The next row, waiting for it (on the reader's thread); nil at the end of the stream.
    ///
    /// - Throws: The error the stream ended with.
    func take() throws -> PostgresRow? {
        condition.lock()
        while start == buffer.count && !finished { condition.wait() }
        guard start < buffer.count else {
            let failure = failure
            condition.unlock()
            if let failure { throw failure }
            return nil
        }
        let row = buffer[start]
        start += 1
        if start >= Self.capacity {  // drop what was read, now and then
            buffer.removeFirst(start)
            start = 0
        }
        var producer: CheckedContinuation<Bool, Never>?
        if buffer.count - start < Self.capacity {
            producer = waitingProducer
            waitingProducer = nil
        }
        condition.unlock()
        producer?.resume(returning: true)
        return row
    }
}

/// A cursor over a result: each ``next()`` takes one row from the ``RowChannel`` (waiting for it
/// while a large result streams) and decodes its cells.
struct PostgresRowCursor: StoreCursor {
    let channel: RowChannel
    var values: [StoredValue]

    init(channel: RowChannel, width: Int) {
        self.channel = channel
        self.values = [StoredValue](repeating: .null, count: width)
    }

    mutating func next() throws -> Bool {
        guard let row = try channel.take() else { return false }
        var column = 0
        for cell in row {
            values[column] = try PostgresWire.read(cell)
            column += 1
        }
        return true
    }

    func value(at column: Int) -> StoredValue { values[column] }
}
