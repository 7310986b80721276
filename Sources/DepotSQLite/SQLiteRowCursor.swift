import Depot
import GRDBSQLite

/// The rows of a running statement, read column by column straight from SQLite's row buffer.
struct SQLiteRowCursor: StoreCursor {
    let runner: SQLiteStatementRunner
    let types: [ColumnType]

    mutating func next() throws -> Bool { try runner.step() }

    func value(at column: Int) -> StoredValue { runner.value(at: Int32(column), type: types[column]) }

    func isNull(at column: Int) -> Bool { sqlite3_column_type(runner.statement, Int32(column)) == SQLITE_NULL }

    func text(at column: Int) -> String? {
        // A decimal column's text is a number, which `value(at:)` parses.
        guard sqlite3_column_type(runner.statement, Int32(column)) == SQLITE_TEXT, types[column] != .decimal else {
            return nil
        }
        return runner.text(at: Int32(column))
    }

    func double(at column: Int) -> Double? {
        guard sqlite3_column_type(runner.statement, Int32(column)) == SQLITE_FLOAT, types[column] == .double else {
            return nil
        }
        return sqlite3_column_double(runner.statement, Int32(column))
    }

    func integer(at column: Int) -> Int64? {
        guard sqlite3_column_type(runner.statement, Int32(column)) == SQLITE_INTEGER else { return nil }
        switch types[column] {
        case .integer, .bool: return sqlite3_column_int64(runner.statement, Int32(column))
        default: return nil
        }
    }
}
