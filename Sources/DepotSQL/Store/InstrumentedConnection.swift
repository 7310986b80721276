import Depot

/// What a store reports each statement to: its log (``SQLLogging``), its metrics
/// (``SQLMetrics``) and its tracer (``SQLTracing``).
package struct SQLInstruments: Sendable {
    package let logging: SQLLogging
    package let meters: SQLMeters
    package let tracing: SQLTracing
    /// `db.system.name`: `sqlite` or `postgresql`.
    package let system: String
    /// Whether anything is reported at all: `false` only for a store made to measure what the
    /// instruments cost (``SQLStore/init(engine:instrumented:)``), which skips every call to them.
    package let isEnabled: Bool

    /// Runs `body`, the statement `sql` with `arguments`, and reports it: logged (see
    /// ``SQLLogging``), counted and timed as `operation`, and traced as a span of its own.
    ///
    /// - Parameters:
    ///   - operation: What the statement does, for the metrics.
    ///   - table: The one table it reads or writes, if it is one (the span names it).
    ///   - sql: The statement's text (built only when something is logged or traced).
    ///   - arguments: Its bound values.
    ///   - rows: How many rows the result stands for, if known.
    ///   - body: Runs the statement.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    package func statement<R>(
        _ operation: SQLMetrics.Operation, table: String? = nil, _ sql: @autoclosure () -> String,
        arguments: [StoredValue], rows: (R) -> Int?, _ body: () async throws -> R
    ) async throws -> R {
        guard isEnabled else { return try await body() }
        guard tracing.tracer != nil else {
            return try await measured(operation, sql(), arguments: arguments, rows: rows, body)
        }
        let text = sql()
        let keyword = String(text.prefix { !$0.isWhitespace }).uppercased()
        return try await tracing.span(table.map { "\(keyword) \($0)" } ?? keyword, kind: .client) { span in
            span.attributes["db.system.name"] = system
            span.attributes["db.operation.name"] = keyword
            if let table { span.attributes["db.collection.name"] = table }
            span.attributes["db.query.text"] = text
            let result = try await measured(operation, text, arguments: arguments, rows: rows, body)
            // Rows a statement returned: a read's. (SQLite answers any other statement with the
            // last write's change count, which is no count of that statement's rows.)
            if operation == .select || operation == .catalog, let count = rows(result) {
                span.attributes["db.response.returned_rows"] = count
            }
            return result
        }
    }

    /// Runs `body`, then logs and counts it.
    private func measured<R>(
        _ operation: SQLMetrics.Operation, _ sql: @autoclosure () -> String, arguments: [StoredValue],
        rows: (R) -> Int?, _ body: () async throws -> R
    ) async throws -> R {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            let elapsed = ContinuousClock.now - start
            let count = rows(result)
            logging.record(sql(), arguments: arguments, elapsed: elapsed, rows: count)
            meters.statement(operation, elapsed: elapsed, rows: count)
            return result
        } catch {
            let elapsed = ContinuousClock.now - start
            logging.failed(sql(), arguments: arguments, elapsed: elapsed, error: error)
            meters.failed(operation, elapsed: elapsed, error: error)
            throw error
        }
    }

    /// Whether a read's rows are counted (for the log, the metrics or a span): counting wraps
    /// every row's cursor calls, so it happens only when someone takes the count.
    var countsRows: Bool {
        isEnabled && (logging.tracesStatements || meters.isEnabled || tracing.tracer != nil)
    }
}

/// An engine's connection that reports every statement it runs to the store's
/// ``SQLInstruments``: what ``SQLStore`` hands its reads, transactions and migrations.
package struct InstrumentedConnection<Base: SQLConnection>: SQLConnection {
    /// The engine's own connection (for the engine's hooks, which take it).
    package let base: Base
    let instruments: SQLInstruments

    init(_ base: Base, instruments: SQLInstruments) {
        self.base = base
        self.instruments = instruments
    }

    @discardableResult
    package func execute(_ statement: SQLStatement) async throws -> Int {
        try await execute(statement, as: .execute)
    }

    /// Runs `statement`, reported as `operation`: a `.delete`'s count is rows written; an
    /// `.execute`'s is not (SQLite answers the last change count to any statement).
    @discardableResult
    package func execute(_ statement: SQLStatement, as operation: SQLMetrics.Operation) async throws -> Int {
        try await instruments.statement(operation, statement.sql, arguments: statement.arguments, rows: { $0 }) {
            try await base.execute(statement)
        }
    }

    package func executeScript(_ sql: String) async throws {
        try await instruments.statement(.script, sql, arguments: [], rows: { nil }) {
            try await base.executeScript(sql)
        }
    }

    package func commit(_ statement: SQLStatement) async throws -> Bool {
        try await instruments.statement(.commit, statement.sql, arguments: statement.arguments, rows: { _ in nil }) {
            try await base.commit(statement)
        }
    }

    package func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        try await instruments.statement(.catalog, statement.sql, arguments: statement.arguments, rows: { $0.count }) {
            try await base.texts(statement)
        }
    }

    package func rows(_ statement: SQLStatement) async throws -> SQLRows {
        try await instruments.statement(.select, statement.sql, arguments: statement.arguments, rows: { $0.rows.count })
        {
            try await base.rows(statement)
        }
    }

    package func scan<Result: Sendable>(
        _ statement: SQLStatement, table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        guard instruments.countsRows else {
            return try await instruments.statement(
                .select, table: table.name, statement.sql, arguments: statement.arguments, rows: { _ in nil }
            ) {
                try await base.scan(statement, table: table, read)
            }
        }
        let counted = try await instruments.statement(
            .select, table: table.name, statement.sql, arguments: statement.arguments, rows: { $0.1 }
        ) {
            try await base.scan(statement, table: table) { cursor -> (Result, Int) in
                var counting: any StoreCursor = CountingCursor(base: cursor)
                let result = try read(&counting)
                return (result, (counting as? CountingCursor)?.rows ?? 0)
            }
        }
        return counted.0
    }

    package func count(_ statement: SQLStatement) async throws -> Int {
        try await instruments.statement(.count, statement.sql, arguments: statement.arguments, rows: { _ in nil }) {
            try await base.count(statement)
        }
    }

    package func write(
        _ rows: RowBatch, into table: TableDescription, mode: WriteMode, keyPositions: [Int], renderer: SQLRenderer
    ) async throws -> Int {
        // The engine renders and binds the batch its own way (SQLite: one statement per row;
        // PostgreSQL: arrays): the log names the statement and the batch, not every row's values.
        try await instruments.statement(
            .write, table: table.name,
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
