import Depot
import GRDB
import GRDBSQLite

/// Turns SQLite and GRDB failures into `DepotError`s that name what went wrong.
enum SQLiteErrors {
    /// A failure while opening the file at `path`.
    static func opening(path: String, _ error: any Error) -> DepotError {
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_NOTADB:
                return DepotError(.storage, "'\(path)' is not a SQLite database", underlying: error)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_IOERR:
                return DepotError(
                    .storage, "cannot open '\(path)' for reading and writing (\(error.message ?? "I/O error"))",
                    underlying: error)
            default:
                break
            }
        }
        return DepotError(.storage, "cannot open the SQLite database at '\(path)'", underlying: error)
    }

    /// Any error from a read, a write or a transaction: Depot errors pass through; SQLite's own
    /// (through GRDB or Depot's statement runner alike) become `DepotError`s.
    static func map(_ error: any Error, path: String) -> any Error {
        if error is DepotError || error is CancellationError { return error }
        let code: Int32
        let message: String
        if let failure = error as? DatabaseError {
            code = failure.resultCode.primaryResultCode.rawValue
            message = failure.message ?? "\(failure.resultCode)"
        } else if let failure = error as? SQLiteFailure {
            code = failure.code
            message = failure.message
        } else {
            return error
        }
        // A statement the task's cancellation interrupted (see `SQLiteConnection`): the
        // cancellation is what the caller asked for.
        if code == SQLITE_INTERRUPT, Task.isCancelled { return CancellationError() }
        if message == "integer overflow" || message.hasPrefix("depot overflow") {
            return DepotError(.overflow, "SQLite: \(message)", underlying: error)
        }
        switch code {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return DepotError(
                .storage, "the database '\(path)' stayed busy (locked by another writer)", underlying: error)
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB:
            return DepotError(.storage, "SQLite could not use '\(path)': \(message)", underlying: error)
        default:
            return DepotError(.storage, "SQLite failed: \(message)", underlying: error)
        }
    }

    /// A failure while writing the row with primary key `key` of `table` (or the cancellation
    /// that interrupted it).
    static func constraint(_ failure: SQLiteFailure, table: TableDescription, key: [StoredValue]) -> any Error {
        if failure.code == SQLITE_INTERRUPT, Task.isCancelled { return CancellationError() }
        let keyText = TableDescription.describeKey(key)
        switch failure.extendedCode {
        case 2067:  // SQLITE_CONSTRAINT_UNIQUE: "UNIQUE constraint failed: table.a, table.b"
            let columns =
                failure.message.split(separator: ":").last.map {
                    $0.split(separator: ",").compactMap { $0.split(separator: ".").last.map(String.init) }
                } ?? []
            if !columns.isEmpty, columns != table.primaryKey {
                let index = table.indexes.first { $0.isUnique && $0.columns == columns }
                return DepotError(
                    .constraintViolation,
                    "\(table.name) row \(keyText): another row has the same \(columns.joined(separator: ", ")), "
                        + "which unique index '\(index?.name ?? "?")' forbids",
                    table: table.name, column: columns.first, underlying: failure)
            }
            return DepotError(
                .constraintViolation, "\(table.name): a row with key \(keyText) already exists",
                table: table.name, underlying: failure)
        case 1555:  // SQLITE_CONSTRAINT_PRIMARYKEY
            return DepotError(
                .constraintViolation, "\(table.name): a row with key \(keyText) already exists",
                table: table.name, underlying: failure)
        case 1299:  // SQLITE_CONSTRAINT_NOTNULL: "NOT NULL constraint failed: table.column"
            let column = failure.message.split(separator: ".").last.map(String.init)
            return DepotError(
                .constraintViolation,
                "\(table.name) row \(keyText): NULL in NOT NULL column \(column ?? "?")",
                table: table.name, column: column, underlying: failure)
        case 787:  // SQLITE_CONSTRAINT_FOREIGNKEY
            return DepotError(
                .constraintViolation, "\(table.name) row \(keyText): foreign key constraint failed",
                table: table.name, underlying: failure)
        default:
            if failure.code == SQLITE_CONSTRAINT {
                return DepotError(
                    .constraintViolation, "\(table.name) row \(keyText): \(failure.message)",
                    table: table.name, underlying: failure)
            }
            return DepotError(
                .storage, "\(table.name) row \(keyText): \(failure.message)", table: table.name, underlying: failure)
        }
    }
}
