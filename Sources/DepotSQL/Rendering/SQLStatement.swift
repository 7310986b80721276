import Depot

/// SQL text and the values bound to its parameters, in order.
public struct SQLStatement: Sendable, Hashable, CustomStringConvertible {
    /// The SQL, with `?` (SQLite) or `$n` (PostgreSQL) placeholders.
    public var sql: String
    /// The bound values.
    public var arguments: [StoredValue]

    /// A statement with its SQL and bound values.
    public init(sql: String, arguments: [StoredValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The SQL and the number of arguments; the values are not shown (they may be secrets).
    public var description: String { "\(sql) [\(arguments.count) argument(s)]" }
}
