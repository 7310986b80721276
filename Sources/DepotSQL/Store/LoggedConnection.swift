import Depot

/// An engine's connection that logs every statement it runs through the store's ``SQLLogging``:
/// what ``SQLStore`` hands its reads, transactions and migrations.
package struct LoggedConnection<Base: SQLConnection>: SQLConnection {
    /// The engine's own connection (for the engine's hooks, which take it).
    package let base: Base
    let logging: SQLLogging

    init(_ base: Base, logging: SQLLogging) {
        self.base = base
        self.logging = logging
    }

    @discardableResult
    package func execute(_ statement: SQLStatement) async throws -> Int {
        try await logging.statement(statement.sql, arguments: statement.arguments, rows: { $0 }) {
            try await base.execute(statement)
        }
    }

    package func executeScript(_ sql: String) async throws {
        try await logging.statement(sql, arguments: [], rows: { nil }) { try await base.executeScript(sql) }
    }

    package func commit(_ statement: SQLStatement) async throws -> Bool {
        try await logging.statement(statement.sql, arguments: statement.arguments, rows: { _ in nil }) {
            try await base.commit(statement)
        }
    }

    package func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        try await logging.statement(statement.sql, arguments: statement.arguments, rows: { $0.count }) {
            try await base.texts(statement)
        }
    }

    package func scan<Result: Sendable>(
        _ statement: SQLStatement, table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        // Rows are counted only when statements are traced: counting wraps every row's cursor calls.
        guard logging.tracesStatements else {
            return try await logging.statement(statement.sql, arguments: statement.arguments, rows: { _ in nil }) {
                try await base.scan(statement, table: table, read)
            }
        }
        let counted = try await logging.statement(statement.sql, arguments: statement.arguments, rows: { $0.1 }) {
            try await base.scan(statement, table: table) { cursor -> (Result, Int) in
                var counting: any StoreCursor = CountingCursor(base: cursor)
                let result = try read(&counting)
                return (result, (counting as? CountingCursor)?.rows ?? 0)
            }
        }
        return counted.0
    }

    package func count(_ statement: SQLStatement) async throws -> Int {
        try await logging.statement(statement.sql, arguments: statement.arguments, rows: { _ in 1 }) {
            try await base.count(statement)
        }
    }

    package func write(
        _ rows: RowBatch, into table: TableDescription, mode: WriteMode, keyPositions: [Int], renderer: SQLRenderer
    ) async throws -> Int {
        // The engine renders and binds the batch its own way (SQLite: one statement per row;
        // PostgreSQL: arrays): the log names the statement and the batch, not every row's values.
        try await logging.statement(
            renderer.insert(into: table, columns: rows.columns, mode: mode) + " -- \(rows.count) row(s)",
            arguments: [], rows: { $0 }
        ) {
            try await base.write(rows, into: table, mode: mode, keyPositions: keyPositions, renderer: renderer)
        }
    }
}

/// A cursor that counts the rows it moves to.
private struct CountingCursor: StoreCursor {
    var base: any StoreCursor
    var rows = 0

    mutating func next() throws -> Bool {
        let moved = try base.next()
        if moved { rows += 1 }
        return moved
    }
    func value(at column: Int) -> StoredValue { base.value(at: column) }
    func isNull(at column: Int) -> Bool { base.isNull(at: column) }
    func text(at column: Int) -> String? { base.text(at: column) }
    func double(at column: Int) -> Double? { base.double(at: column) }
    func integer(at column: Int) -> Int64? { base.integer(at: column) }
}
