import Depot
import PostgresNIO

/// Turns PostgresNIO and server failures into `DepotError`s that name what went wrong.
enum PostgresErrors {
    /// Any error from an operation: Depot errors and cancellation pass through.
    static func map(_ error: any Error, address: String) -> any Error {
        if error is DepotError || error is CancellationError { return error }
        if case .connectionClosed? = error as? PostgresError {
            // PostgresNIO's older error, still thrown by its COPY once the channel is gone.
            return DepotError(
                .connection, "lost the connection to PostgreSQL at \(address) (it closed)", underlying: error)
        }
        guard let failure = error as? PSQLError else { return error }
        if failure.code == .server, let state = failure.serverInfo?[.sqlState] {
            let message = failure.serverInfo?[.message] ?? "server error \(state)"
            let table = failure.serverInfo?[.tableName]
            let column = failure.serverInfo?[.columnName]
            switch state {
            case "23505", "23502", "23503", "23514":
                return constraint(failure, state: state, table: table, column: column, message: message)
            case _ where state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03":
                return DepotError(
                    .connection, "lost the connection to PostgreSQL at \(address): \(message)", underlying: error)
            case "22003":
                return DepotError(.overflow, "PostgreSQL: \(message)", table: table, column: column, underlying: error)
            case "25006":
                return DepotError.writeOutsideTransaction(engine: "PostgreSQL", underlying: error)
            case "40001", "40P01":
                return DepotError(.transaction, "PostgreSQL aborted the transaction: \(message)", underlying: error)
            default:
                return DepotError(
                    .storage, "PostgreSQL failed: \(message)" + (failure.serverInfo?[.detail].map { " (\($0))" } ?? ""),
                    table: table, column: column, underlying: error)
            }
        }
        switch failure.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed:
            return DepotError(
                .connection, "lost the connection to PostgreSQL at \(address) (\(failure.code))", underlying: error)
        case .sslUnsupported, .failedToAddSSLHandler, .unsupportedAuthMechanism, .authMechanismRequiresPassword,
            .saslError:
            return DepotError(
                .connection, "could not log in to PostgreSQL at \(address) (\(failure.code))", underlying: error)
        default:
            return DepotError(.storage, "PostgreSQL failed (\(failure.code))", underlying: error)
        }
    }

    /// A failure while writing a batch into `table`: constraint violations name the table, the
    /// key or column, and the constraint.
    static func write(_ error: any Error, table: TableDescription, address: String) -> any Error {
        guard let failure = error as? PSQLError, failure.code == .server,
            let state = failure.serverInfo?[.sqlState], ["23505", "23502", "23503", "23514"].contains(state)
        else { return map(error, address: address) }
        return constraint(
            failure, state: state, table: table.name, column: failure.serverInfo?[.columnName],
            message: failure.serverInfo?[.message] ?? state)
    }

    private static func constraint(
        _ failure: PSQLError, state: String, table: String?, column: String?, message: String
    ) -> DepotError {
        let name = table ?? "?"
        let detail = failure.serverInfo?[.detail] ?? ""
        let constraintName = failure.serverInfo?[.constraintName].map { " (constraint \($0))" } ?? ""
        switch state {
        case "23505":
            // detail: Key (icao)=(ENGM) already exists.
            var key = Substring(detail)
            if key.hasPrefix("Key ") { key = key.dropFirst(4) }
            if key.hasSuffix(" already exists.") { key = key.dropLast(16) }
            let trimmed = key.isEmpty ? "?" : String(key)
            if let constraint = failure.serverInfo?[.constraintName], !constraint.hasSuffix("_pkey") {
                // A unique index other than the primary key: Key (email)=(a@b) already exists.
                let columns = trimmed.hasPrefix("(") ? trimmed.dropFirst().prefix { $0 != ")" } : ""
                return DepotError(
                    .constraintViolation,
                    "\(name): another row has the same \(trimmed), which unique index '\(constraint)' forbids",
                    table: table, column: columns.split(separator: ",").first.map { String($0) }, underlying: failure)
            }
            return DepotError(
                .constraintViolation, "\(name): a row with key \(trimmed) already exists\(constraintName)",
                table: table, underlying: failure)
        case "23502":
            return DepotError(
                .constraintViolation, "\(name): NULL in NOT NULL column \(column ?? "?")",
                table: table, column: column, underlying: failure)
        case "23503":
            return DepotError(
                .constraintViolation, "\(name): foreign key constraint failed\(constraintName): \(detail)",
                table: table, underlying: failure)
        default:
            return DepotError(
                .constraintViolation, "\(name): \(message)\(constraintName)", table: table, column: column,
                underlying: failure)
        }
    }
}
