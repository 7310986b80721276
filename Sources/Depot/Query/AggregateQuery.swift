/// A function computed over the rows of a group.
public enum AggregateFunction: String, Sendable, Hashable {
    /// How many rows (``AggregateTerm/column`` `nil`), or how many non-NULL values of a column.
    case count
    /// The sum of the non-NULL values; 0 when there are none. Integers sum exactly and report
    /// an overflow of Int64, decimals sum exactly, doubles as the engine adds them (in no defined
    /// order); a floating-point sum that is not finite (beyond the largest double, or infinity
    /// minus infinity) fails with `.overflow`.
    case sum
    /// The sum of the non-NULL values divided by their count, as a Double (integer and double
    /// columns; integers divide their exact sum); NULL when there are none. Fails with
    /// `.overflow` where ``sum`` does.
    case average
    /// The smallest non-NULL value, in the order `ORDER BY` uses; NULL when there are none.
    case min
    /// The largest non-NULL value, in the order `ORDER BY` uses; NULL when there are none.
    case max
}

/// One aggregate a store computes: a function over a column (or over rows, for `count`).
public struct AggregateTerm: Sendable, Hashable {
    /// The function.
    public var function: AggregateFunction
    /// The column it reads; `nil` only for `count` of rows.
    public var column: String?

    /// `function` over `column` (`nil`: count the rows).
    public init(_ function: AggregateFunction, _ column: String?) {
        self.function = function
        self.column = column
    }

    /// The storage type of the result, for a column of type `type` (`nil` for `count(*)`).
    public func resultType(columnType type: ColumnType?) -> ColumnType {
        switch function {
        case .count: .integer
        case .average: .double
        case .sum, .min, .max: type ?? .integer
        }
    }
}

/// A condition on a group's aggregates (SQL's `HAVING`), with SQL's three-valued logic: a NULL
/// aggregate (the average of no values) makes a comparison unknown.
public indirect enum AggregatePredicate: Sendable, Hashable {
    /// Compares an aggregate with a value.
    case compare(AggregateTerm, ComparisonOperator, StoredValue)
    /// Every condition holds; an empty list is true.
    case and([AggregatePredicate])
    /// At least one condition holds; an empty list is false.
    case or([AggregatePredicate])
    /// The condition does not hold; unknown stays unknown.
    case not(AggregatePredicate)

    /// Every aggregate the condition compares.
    public var terms: [AggregateTerm] {
        switch self {
        case .compare(let term, _, _): [term]
        case .and(let nodes), .or(let nodes): nodes.flatMap(\.terms)
        case .not(let node): node.terms
        }
    }
}

/// One term of the order of a grouped result.
public enum AggregateOrderTerm: Sendable, Hashable {
    /// By a grouping column; NULL first when ascending, last when descending.
    case group(String, descending: Bool)
    /// By an aggregate's value; NULL first when ascending, last when descending.
    case aggregate(AggregateTerm, descending: Bool)
}

/// A grouped query as stores see it: which rows, grouped by which columns, which aggregates per
/// group, which groups kept, in which order, how many.
///
/// Each result row holds the grouping columns' values (in ``groupBy`` order), then the
/// aggregates' (in ``aggregates`` order), as ``StoredValue``s of ``resultTable``'s types: `count`
/// an integer, `sum` the column's type (0 when no value is summed), `average` a double, `min` and
/// `max` the column's type. Without grouping columns the result is one row, also over no rows
/// (count 0, sum 0, the others NULL); with them, one row per distinct combination of values
/// among the matching rows (NULL forms a group of its own), so no group is ever empty.
public struct AggregateQuery: Sendable, Hashable {
    /// The table read.
    public var table: TableDescription
    /// The rows aggregated; `nil` takes every row.
    public var predicate: PredicateNode?
    /// The columns whose values form the groups; empty for one group of every matching row.
    public var groupBy: [String]
    /// The aggregates computed per group.
    public var aggregates: [AggregateTerm]
    /// The groups kept; `nil` keeps every group.
    public var having: AggregatePredicate?
    /// The order of the groups, always ending with the grouping columns ascending (a total,
    /// store-independent order).
    public var ordering: [AggregateOrderTerm]
    /// The most groups returned.
    public var limit: Int?
    /// Groups skipped before the first returned.
    public var offset: Int?

    /// A grouped query over `table`; the grouping columns are appended to `ordering` as the final
    /// tie-breakers.
    public init(
        table: TableDescription, predicate: PredicateNode? = nil, groupBy: [String] = [],
        aggregates: [AggregateTerm], having: AggregatePredicate? = nil, ordering: [AggregateOrderTerm] = [],
        limit: Int? = nil, offset: Int? = nil
    ) {
        self.table = table
        self.predicate = predicate
        self.groupBy = groupBy
        self.aggregates = aggregates
        self.having = having
        var terms = ordering
        for column in groupBy
        where !terms.contains(where: { if case .group(column, _) = $0 { true } else { false } }) {
            terms.append(.group(column, descending: false))
        }
        self.ordering = terms
        self.limit = limit
        self.offset = offset
    }

    /// The result's columns: the grouping columns, then one column per aggregate (named
    /// `aggregate1`, `aggregate2`, …), typed as the store returns them.
    public var resultTable: TableDescription {
        var columns = groupBy.map { name in
            TableDescription.ColumnDescription(
                name: name, type: table.columns.first { $0.name == name }?.type ?? .text, isNullable: true)
        }
        for (position, term) in aggregates.enumerated() {
            columns.append(
                .init(name: "aggregate\(position + 1)", type: resultType(of: term), isNullable: true))
        }
        return TableDescription(name: table.name, entityName: table.entityName, columns: columns, primaryKey: [])
    }

    /// The storage type of `term`'s result.
    public func resultType(of term: AggregateTerm) -> ColumnType {
        term.resultType(columnType: term.column.flatMap { name in table.columns.first { $0.name == name }?.type })
    }

    /// Whether `term` reads an integer column (an average then divides the exact sum).
    package func resultTypeIsExact(_ term: AggregateTerm) -> Bool {
        term.column.flatMap { name in table.columns.first { $0.name == name }?.type } == .integer
    }

    /// The answer over no rows: nothing when grouped, else one row of empty aggregates (count
    /// 0, sum 0, the others NULL) — what a table that does not exist yet answers.
    public var emptyResult: [[StoredValue]] {
        guard groupBy.isEmpty else { return [] }
        let row = aggregates.map { term -> StoredValue in
            switch term.function {
            case .count: .integer(0)
            case .sum: Self.zero(resultType(of: term))
            case .average, .min, .max: .null
            }
        }
        let kept = having.map { AggregateQuery.holds($0, aggregates: aggregates, row: row) == true } ?? true
        return kept && (offset ?? 0) == 0 && limit != 0 ? [row] : []
    }

    /// The sum of no values, in the storage type of a sum.
    public static func zero(_ type: ColumnType) -> StoredValue {
        switch type {
        case .double: .double(0)
        case .decimal: .decimal(0)
        default: .integer(0)
        }
    }

    /// Every aggregate the query computes, those only `having` and the ordering name included
    /// (each once, the returned ones first).
    public var allTerms: [AggregateTerm] {
        var terms = aggregates
        var extra = having?.terms ?? []
        for term in ordering { if case .aggregate(let aggregate, _) = term { extra.append(aggregate) } }
        for term in extra where !terms.contains(term) { terms.append(term) }
        return terms
    }

    /// The query ready to run: `nil` when its table does not exist, subqueries over tables that
    /// do not exist answered as empty.
    package func resolved(exists: (TableDescription) async throws -> Bool) async rethrows -> AggregateQuery? {
        guard try await exists(table) else { return nil }
        var copy = self
        copy.predicate = try await predicate?.resolvingSubqueries(exists: exists)
        return copy
    }

    /// ``resolved(exists:)`` for stores that check tables synchronously.
    package func resolved(exists: (TableDescription) throws -> Bool) rethrows -> AggregateQuery? {
        guard try exists(table) else { return nil }
        var copy = self
        copy.predicate = try predicate?.resolvingSubqueries(exists: exists)
        return copy
    }

    /// Checks the query against its table before it runs: what every store calls first.
    ///
    /// - Throws: A ``DepotError`` of kind `.invalidQuery` naming a column the table lacks, a
    ///   `count` that is the only function allowed without a column, a `sum` or `average` of a
    ///   column that is not a number, a `min` or `max` of a column without an order
    ///   (Boolean, bytes, JSON), a comparison with NaN, or a negative limit or offset.
    public func validate() throws {
        for name in groupBy { _ = try table.requireColumn(name) }
        try predicate?.validate(against: table)
        for term in allTerms {
            guard let name = term.column else {
                guard term.function == .count else {
                    throw DepotError(
                        .invalidQuery, "\(term.function.rawValue) needs a column (only count counts rows)",
                        table: table.name)
                }
                continue
            }
            let type = table.columns[try table.requireColumn(name)].type
            let allowed: Bool
            switch term.function {
            case .count: allowed = true
            case .sum: allowed = [.integer, .double, .decimal].contains(type)
            case .average: allowed = [.integer, .double].contains(type)
            case .min, .max: allowed = ![.bool, .blob, .json].contains(type)
            }
            guard allowed else {
                throw DepotError(
                    .invalidQuery,
                    "\(term.function.rawValue) of column \(name) of \(table.entityName) (table '\(table.name)', "
                        + "\(type.rawValue)) is not defined", table: table.name, column: name)
            }
        }
        if let having { try Self.refuseNotANumber(having, table: table.name) }
        for term in ordering {
            if case .group(let name, _) = term, !groupBy.contains(name) {
                throw DepotError(
                    .invalidQuery, "a grouped result can only be ordered by a grouping column (got \(name))",
                    table: table.name, column: name)
            }
        }
        if let limit, limit < 0 {
            throw DepotError(.invalidQuery, "limit must not be negative (got \(limit))", table: table.name)
        }
        if let offset, offset < 0 {
            throw DepotError(.invalidQuery, "offset must not be negative (got \(offset))", table: table.name)
        }
    }

    private static func refuseNotANumber(_ node: AggregatePredicate, table: String) throws {
        switch node {
        case .compare(let term, _, let value) where value.isNotANumber:
            throw DepotError(
                .invalidQuery, "a having condition compares \(term.function.rawValue) with NaN", table: table,
                column: term.column)
        case .and(let nodes), .or(let nodes): for node in nodes { try refuseNotANumber(node, table: table) }
        case .not(let node): try refuseNotANumber(node, table: table)
        default: break
        }
    }

    /// Throws when `value`, the result of a floating-point `sum` or `average`, is not a finite
    /// number: the engines disagree on what an overflowing or undefined sum is (PostgreSQL fails,
    /// SQLite gives infinity or NULL), so every store reports it as `.overflow`.
    package static func checkFinite(_ value: StoredValue, _ term: AggregateTerm, table: TableDescription) throws {
        guard term.function == .sum || term.function == .average, case .double(let number) = value,
            !number.isFinite
        else { return }
        throw overflow(term, table: table, detail: "is \(number), not a finite number")
    }

    /// The error for `term` whose result does not fit its type.
    package static func overflow(_ term: AggregateTerm?, table: TableDescription, detail: String) -> DepotError {
        DepotError(
            .overflow,
            "the \(term?.function.rawValue ?? "sum") of column \(term?.column ?? "?") of \(table.entityName) "
                + "(table '\(table.name)') \(detail)", table: table.name, column: term?.column)
    }

    /// Whether `row` (the values of `aggregates`) satisfies `node`, three-valued.
    package static func holds(_ node: AggregatePredicate, aggregates: [AggregateTerm], row: [StoredValue]) -> Bool? {
        switch node {
        case .compare(let term, let op, let value):
            guard let index = aggregates.firstIndex(of: term) else { return nil }
            return StoredValue.sqlCompare(row[index], op, value)
        case .and(let nodes):
            var result: Bool? = true
            for node in nodes {
                switch holds(node, aggregates: aggregates, row: row) {
                case false?: return false
                case nil: result = nil
                case true?: break
                }
            }
            return result
        case .or(let nodes):
            var result: Bool? = false
            for node in nodes {
                switch holds(node, aggregates: aggregates, row: row) {
                case true?: return true
                case nil: result = nil
                case false?: break
                }
            }
            return result
        case .not(let node):
            return holds(node, aggregates: aggregates, row: row).map { !$0 }
        }
    }
}
