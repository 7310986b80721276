import Depot
import DepotSQL
import Foundation
import GRDB
import GRDBSQLite

/// The statements an SQLite connection runs for Depot, with hot loops on the C API.
enum SQLiteOperations {
    /// Runs a rendered `SELECT` and hands its rows to `read` through a cursor on the statement.
    static func scan<Result>(
        _ statement: SQLStatement, table: TableDescription, db: Database, statements: SQLiteStatementCache,
        _ read: (inout any StoreCursor) throws -> Result
    ) throws -> Result {
        let prepared = try statements.statement(statement.sql, db)
        let runner = SQLiteStatementRunner(prepared, db)
        runner.reset()
        defer { runner.reset() }
        try runner.bind(statement.arguments)
        var cursor: any StoreCursor = SQLiteRowCursor(runner: runner, types: table.columns.map(\.type))
        return try read(&cursor)
    }

    /// Runs a rendered `SELECT COUNT(*)`.
    static func count(_ statement: SQLStatement, db: Database, statements: SQLiteStatementCache) throws -> Int {
        let prepared = try statements.statement(statement.sql, db)
        let runner = SQLiteStatementRunner(prepared, db)
        runner.reset()
        defer { runner.reset() }
        try runner.bind(statement.arguments)
        guard try runner.step(), case .integer(let count) = runner.value(at: 0, type: .integer) else { return 0 }
        return Int(count)
    }

    /// Writes a batch with one prepared statement, bound and stepped once per row; returns how
    /// many rows the statement changed (an `UPDATE` of a key not stored changes none).
    static func write(
        _ rows: RowBatch, sql: String, table: TableDescription, keyPositions: [Int], db: Database,
        statements: SQLiteStatementCache
    ) throws -> Int {
        let prepared = try statements.statement(sql, db)
        let runner = SQLiteStatementRunner(prepared, db)
        let width = rows.columns.count
        var changed = 0
        defer { runner.reset() }
        for row in 0..<rows.count {
            runner.reset()
            let values = rows.values[(row * width)..<((row + 1) * width)]
            do {
                try runner.bind(values)
                _ = try runner.step()
            } catch let failure as SQLiteFailure {
                let key = keyPositions.map { values[values.startIndex + $0] }
                throw SQLiteErrors.constraint(failure, table: table, key: key)
            }
            // Rows changed by this statement itself, not by triggers.
            changed += Int(sqlite3_changes(runner.connection))
        }
        return changed
    }

    /// GRDB arguments for values bound outside the hot loops.
    static func arguments(_ values: [StoredValue]) throws -> StatementArguments {
        StatementArguments(values.map(databaseValue))
    }

    static func databaseValue(_ value: StoredValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let flag): (flag ? 1 : 0).databaseValue
        case .integer(let number): number.databaseValue
        case .double(let number): number.databaseValue
        case .date(let date): date.timeIntervalSinceReferenceDate.databaseValue
        case .decimal(let decimal): decimal.description.databaseValue
        case .text(let text): text.databaseValue
        case .blob(let data): data.databaseValue
        case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        }
    }
}
