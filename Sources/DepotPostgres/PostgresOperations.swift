import Depot
import DepotSQL
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
    static func scan<Result>(
        _ statement: SQLStatement, table: TableDescription, on connection: PostgresConnection,
        _ read: (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        var rows: [PostgresRow] = []
        for try await row in try await connection.query(query(statement), logger: logger) {
            rows.append(row)
        }
        var cursor: any StoreCursor = PostgresRowCursor(rows: rows, width: table.columns.count)
        return try read(&cursor)
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
    private func mapped<T>(_ body: () async throws -> T) async throws -> T {
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

    /// Writes the batch as one array per column (`SQLRenderer.arrayWrite(into:columns:mode:)`),
    /// 5,000 rows per statement.
    ///
    /// - Throws: `.constraintViolation` naming the row and column when a text holds U+0000,
    ///   which PostgreSQL text cannot store (checked before anything is sent).
    public func write(
        _ rows: RowBatch, into table: TableDescription, mode: WriteMode, keyPositions: [Int], renderer: SQLRenderer
    ) async throws -> Int {
        try Self.rejectNUL(rows, table: table, keyPositions: keyPositions)
        let plan = renderer.arrayWrite(into: table, columns: rows.columns, mode: mode)
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
                    binds.append(PostgresArrayParameter(values: values, width: width, position: position, type: type))
                }
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
struct PostgresRowCursor: StoreCursor {
    let rows: [PostgresRow]
    var index = -1
    var values: [StoredValue]

    init(rows: [PostgresRow], width: Int) {
        self.rows = rows
        self.values = [StoredValue](repeating: .null, count: width)
    }

    mutating func next() throws -> Bool {
        guard index + 1 < rows.count else {
            index = rows.count
            return false
        }
        index += 1
        var column = 0
        for cell in rows[index] {
            values[column] = try PostgresWire.read(cell)
            column += 1
        }
        return true
    }

    func value(at column: Int) -> StoredValue { values[column] }
}
