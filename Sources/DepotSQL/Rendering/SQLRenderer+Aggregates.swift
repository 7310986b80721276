import Depot
import Foundation

extension SQLRenderer {
    // MARK: - Aggregates

    /// The `SELECT … GROUP BY` of an aggregate query: the grouping columns, then each aggregate,
    /// typed as `AggregateQuery.resultTable` says.
    ///
    /// ```swift
    /// // airports.group(by: \.country, computing: .count, .max(\.elevation),
    /// //                having: Aggregate.count > 100, orderBy: [.descending(.count)], limit: 3)
    /// // SQLite:     SELECT "country", COUNT(*), MAX("elevation") FROM "airports"
    /// //             GROUP BY "country" HAVING COUNT(*) > ?
    /// //             ORDER BY COUNT(*) DESC, "country" LIMIT ?
    /// // PostgreSQL: SELECT "country", COUNT(*), MAX("elevation") FROM "airports"
    /// //             GROUP BY "country" HAVING COUNT(*) > $1
    /// //             ORDER BY COUNT(*) DESC NULLS LAST, "country" COLLATE "C" ASC NULLS FIRST LIMIT $2
    /// ```
    public func aggregate(_ query: AggregateQuery) -> SQLStatement {
        var builder = ArgumentList(dialect: dialect)
        let table = query.table
        var selected = query.groupBy.map(quote)
        selected += query.aggregates.map { expression($0, table) }
        var sql = "SELECT " + selected.joined(separator: ", ") + " FROM " + quote(table.name)
        if let predicate = query.predicate {
            sql += " WHERE " + render(predicate, table, &builder)
        }
        if !query.groupBy.isEmpty {
            sql += " GROUP BY " + query.groupBy.map { groupOperand($0, table) }.joined(separator: ", ")
        }
        if let having = query.having {
            sql += " HAVING " + render(having, table, &builder)
        }
        let order = query.ordering.map { term -> String in
            let (subject, descending): (String, Bool)
            switch term {
            case .group(let name, let isDescending): (subject, descending) = (operand(name, table), isDescending)
            case .aggregate(let aggregate, let isDescending):
                (subject, descending) = (comparable(aggregate, table), isDescending)
            }
            return dialect.ordering(subject, descending: descending)
        }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        sql += limitClause(limit: query.limit, offset: query.offset, &builder)
        return SQLStatement(sql: sql, arguments: builder.values)
    }

    /// A grouping column: SQLite groups exact decimals (stored as text) by value.
    private func groupOperand(_ column: String, _ table: TableDescription) -> String {
        dialect.groupOperand(quote(column), type: table.columns.first { $0.name == column }?.type)
    }

    /// The SQL computing `term`, of the storage type `AggregateTerm.resultType(columnType:)`
    /// gives (PostgreSQL's integer sums come back as `numeric`; the store narrows them).
    func expression(_ term: AggregateTerm, _ table: TableDescription) -> String {
        guard let name = term.column else { return "COUNT(*)" }
        let column = quote(name)
        let type = table.columns.first { $0.name == name }?.type
        return dialect.aggregate(term.function, column, type: type)
    }

    /// `term`'s SQL where it is compared or ordered: SQLite compares exact decimals (text) by
    /// value only with the collation written next to the operand.
    private func comparable(_ term: AggregateTerm, _ table: TableDescription) -> String {
        let type = term.column.flatMap { name in table.columns.first { $0.name == name }?.type }
        guard term.function != .count else { return expression(term, table) }
        return dialect.comparableAggregate(expression(term, table), type: type)
    }

    /// Renders a `HAVING` condition; values are appended to `arguments`.
    func render(_ node: AggregatePredicate, _ table: TableDescription, _ arguments: inout ArgumentList) -> String {
        switch node {
        case .compare(let term, let op, let value):
            return "\(comparable(term, table)) \(op.rawValue) \(arguments.add(value))"
        case .and(let nodes):
            return joined(nodes, "AND", table, &arguments, render)
        case .or(let nodes):
            return joined(nodes, "OR", table, &arguments, render)
        case .not(let inner):
            return "NOT (" + render(inner, table, &arguments) + ")"
        }
    }

    /// `(a) AND (b) …` (or `OR`) of conditions rendered by `render`; an empty `AND` is true, an
    /// empty `OR` false: the one way filters and `HAVING` conditions are combined.
    func joined<Node>(
        _ nodes: [Node], _ connective: String, _ table: TableDescription, _ arguments: inout ArgumentList,
        _ render: (Node, TableDescription, inout ArgumentList) -> String
    ) -> String {
        if nodes.isEmpty { return connective == "AND" ? "1 = 1" : "1 = 0" }
        return nodes.map { "(" + render($0, table, &arguments) + ")" }.joined(separator: " \(connective) ")
    }
}

extension SQLRenderer {
    /// Runs the rendered `query` on `connection` and returns its rows as
    /// `AggregateQuery.resultTable` types them: PostgreSQL's integer sums (`numeric`) narrowed
    /// to Int64, an overflow or a floating-point sum that is not finite named by table and column.
    func run(_ query: AggregateQuery, on connection: some SQLConnection) async throws -> [[StoredValue]] {
        let result = query.resultTable
        let rows: [[StoredValue]]
        do {
            let width = result.columns.count
            rows = try await connection.scan(aggregate(query), table: result) { cursor in
                try decodeRows(&cursor, width: width) { $0 }
            }
        } catch let error as DepotError where error.kind == .overflow {
            var named = AggregateQuery.overflow(
                query.aggregates.first { $0.function == .sum || $0.function == .average }, table: query.table,
                detail: "overflows")
            named.underlying = error
            throw named
        }
        let first = query.groupBy.count
        return try rows.map { row in
            var row = row
            for (position, term) in query.aggregates.enumerated() {
                let value = row[first + position]
                switch (result.columns[first + position].type, term.function, value) {
                case (.integer, .sum, .decimal(let number)):
                    guard number >= Decimal(Int64.min), number <= Decimal(Int64.max) else {
                        throw AggregateQuery.overflow(term, table: query.table, detail: "overflows Int64")
                    }
                    row[first + position] = .integer(NSDecimalNumber(decimal: number).int64Value)
                // SQLite answers NULL for a NaN sum (TOTAL never is NULL otherwise), and the text
                // 'NaN' for a NaN average (see expression(_:_:)).
                case (.double, .sum, .null), (.double, .average, .text):
                    throw AggregateQuery.overflow(term, table: query.table, detail: "is not a number")
                case (.double, _, _):
                    try AggregateQuery.checkFinite(value, term, table: query.table)
                default:
                    break
                }
            }
            return row
        }
    }
}
