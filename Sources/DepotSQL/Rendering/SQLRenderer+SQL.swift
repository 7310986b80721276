import Depot

extension SQLRenderer {
    // MARK: - Hand-written statements

    /// A hand-written statement in this dialect: its text with placeholders, its values bound.
    ///
    /// ```swift
    /// SQLRenderer(dialect: .postgres).render("SELECT * FROM \(table: Airport.self) WHERE country = \("NO")")
    /// // SELECT * FROM "airports" WHERE country = $1   -- "NO" bound
    /// ```
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when the statement has no text for this
    ///   dialect or names an identifier that is not valid.
    public func render(_ statement: SQL) throws -> SQLStatement {
        guard let segments = statement.segments(for: dialect.name) else {
            throw DepotError(.invalidQuery, "the SQL statement has no text for \(dialect.displayName)")
        }
        var builder = ArgumentList(dialect: dialect)
        var sql = ""
        for segment in segments {
            switch segment {
            case .text(let text):
                sql += text
            case .value(let value):
                sql += builder.add(value)
            case .list(let values, let type):
                sql +=
                    values.isEmpty
                    ? dialect.emptySet(of: type) : "(" + values.map { builder.add($0) }.joined(separator: ", ") + ")"
            case .identifier(let name):
                guard TableDescription.isValidIdentifier(name) else {
                    let shown = name.hasPrefix("\u{0}") ? "a key path that is not a column" : "'\(name)'"
                    throw DepotError(.invalidQuery, "the SQL statement names \(shown) as an identifier")
                }
                sql += quote(name)
            }
        }
        return SQLStatement(sql: sql, arguments: builder.values)
    }

    /// A hand-written statement wrapped so its result has `table`'s columns in order:
    /// `SELECT "a", "b" FROM (statement) AS depot_sql`.
    ///
    /// - Throws: What ``render(_:)`` throws.
    public func render(_ statement: SQL, shapedAs table: TableDescription) throws -> SQLStatement {
        let inner = try render(statement)
        let columns = table.columns.map { quote($0.name) }.joined(separator: ", ")
        return SQLStatement(sql: "SELECT \(columns) FROM (\(inner.sql)) AS depot_sql", arguments: inner.arguments)
    }
}
