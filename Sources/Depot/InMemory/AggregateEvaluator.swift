import Foundation

/// Computes an ``AggregateQuery`` over rows of stored values with SQL's semantics: what the
/// in-memory store runs where SQL stores run `GROUP BY`, and what any store without its own
/// aggregation answers through ``StoreReader/aggregate(_:)``'s default.
package struct AggregateEvaluator: Sendable {
    let query: AggregateQuery
    let terms: [AggregateTerm]
    let columns: [Int?]
    let groupColumns: [Int]

    package init(_ query: AggregateQuery) throws {
        self.query = query
        terms = query.allTerms
        columns = try terms.map { term in try term.column.map { try query.table.requireColumn($0) } }
        groupColumns = try query.groupBy.map { try query.table.requireColumn($0) }
    }

    /// The running state of one term over one group.
    private enum Accumulator {
        case count(Int64)
        /// Exact: running totals beyond Int64 are fine; only the final sum must fit.
        case integerSum(Int128)
        case doubleSum(Double)
        case decimalSum(Decimal)
        case average(sum: Double, exact: Int128, count: Int64)
        case extreme(StoredValue, largest: Bool)
    }

    private func start(_ term: AggregateTerm) -> Accumulator {
        switch term.function {
        case .count: return .count(0)
        case .sum:
            switch query.resultType(of: term) {
            case .double: return .doubleSum(0)
            case .decimal: return .decimalSum(0)
            default: return .integerSum(0)
            }
        case .average: return .average(sum: 0, exact: 0, count: 0)
        case .min: return .extreme(.null, largest: false)
        case .max: return .extreme(.null, largest: true)
        }
    }

    private func add(_ value: StoredValue?, to accumulator: inout Accumulator, term: AggregateTerm) throws {
        // `nil`: count(*) counts the row itself.
        if let value, value.isNull { return }
        switch accumulator {
        case .count(let count):
            accumulator = .count(count + 1)
        case .integerSum(let sum):
            guard case .integer(let number)? = value else { return }
            accumulator = .integerSum(sum + Int128(number))
        case .doubleSum(let sum):
            accumulator = .doubleSum(sum + (value?.doubleValue ?? 0))
        case .decimalSum(let sum):
            guard case .decimal(let number)? = value else { return }
            accumulator = .decimalSum(sum + number)
        case .average(let sum, let exact, let count):
            switch value {
            case .integer(let number)?:
                // Integers add exactly, as the engines add them, then round once to a double.
                accumulator = .average(sum: sum, exact: exact + Int128(number), count: count + 1)
            case .double(let number)?:
                accumulator = .average(sum: sum + number, exact: 0, count: count + 1)
            default:
                return
            }
        case .extreme(let current, let largest):
            guard let value else { return }
            if current.isNull {
                accumulator = .extreme(value, largest: largest)
            } else {
                let order = StoredValue.sqlOrder(value, current)
                if largest ? order > 0 : order < 0 { accumulator = .extreme(value, largest: largest) }
            }
        }
    }

    private func result(_ accumulator: Accumulator, term: AggregateTerm) throws -> StoredValue {
        let value: StoredValue
        switch accumulator {
        case .count(let count): value = .integer(count)
        case .integerSum(let sum):
            guard let exact = Int64(exactly: sum) else {
                throw AggregateQuery.overflow(term, table: query.table, detail: "overflows Int64")
            }
            value = .integer(exact)
        case .doubleSum(let sum): value = .double(sum)
        case .decimalSum(let sum): value = .decimal(sum)
        case .average(let sum, let exact, let count):
            value = count == 0 ? .null : .double((query.resultTypeIsExact(term) ? Double(exact) : sum) / Double(count))
        case .extreme(let extreme, _): value = extreme
        }
        try AggregateQuery.checkFinite(value, term, table: query.table)
        return value
    }

    /// The query's answer over `rows` (every row of its table, in its column order).
    package func run(over rows: some Sequence<[StoredValue]>, rowsOf: @escaping QueryEvaluator.TableRows) throws
        -> [[StoredValue]]
    {
        let condition = try query.predicate.map { try QueryEvaluator(table: query.table, rowsOf: rowsOf).condition($0) }
        var groups: [[StoredValue]: Int] = [:]
        var keys: [[StoredValue]] = []
        var states: [[Accumulator]] = []
        if groupColumns.isEmpty {
            keys.append([])
            states.append(terms.map(start))
        }
        for row in rows where condition?(row) ?? true {
            let key = groupColumns.map { row[$0] }
            let group: Int
            if groupColumns.isEmpty {
                group = 0
            } else if let known = groups[key] {
                group = known
            } else {
                group = keys.count
                groups[key] = group
                keys.append(key)
                states.append(terms.map(start))
            }
            for (position, term) in terms.enumerated() {
                try add(columns[position].map { row[$0] }, to: &states[group][position], term: term)
            }
        }
        var results: [[StoredValue]] = []
        for (key, state) in zip(keys, states) {
            let values = try zip(state, terms).map { try result($0, term: $1) }
            if let having = query.having, AggregateQuery.holds(having, aggregates: terms, row: values) != true {
                continue
            }
            results.append(key + values)
        }
        results.sort(by: areInIncreasingOrder)
        let start = min(query.offset ?? 0, results.count)
        let end = query.limit.map { start + min($0, results.count - start) } ?? results.count
        let width = query.groupBy.count + query.aggregates.count
        return results[start..<end].map { Array($0.prefix(width)) }
    }

    /// The query's order over result rows (grouping values, then every term's value); NULL first
    /// when ascending.
    private func areInIncreasingOrder(_ a: [StoredValue], _ b: [StoredValue]) -> Bool {
        for term in query.ordering {
            let index: Int
            let descending: Bool
            switch term {
            case .group(let name, let isDescending):
                index = query.groupBy.firstIndex(of: name) ?? 0
                descending = isDescending
            case .aggregate(let aggregate, let isDescending):
                index = query.groupBy.count + (terms.firstIndex(of: aggregate) ?? 0)
                descending = isDescending
            }
            let order = StoredValue.sqlOrderNullsFirst(a[index], b[index])
            if order != 0 { return descending ? order > 0 : order < 0 }
        }
        return false
    }
}

extension StoreReader {
    /// Computes `query` from the rows ``scan(_:_:)`` reads, in Swift: the answer of a store that
    /// does not aggregate by itself (the in-memory store's, since it holds its rows in Swift).
    /// SQL stores run `GROUP BY` instead.
    ///
    /// - Throws: A ``DepotError`` of kind `.invalidQuery` (``AggregateQuery/validate()``),
    ///   `.overflow` when an integer sum exceeds Int64, and what ``scan(_:_:)`` throws.
    public func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try query.validate()
        let rows = try await fetch(SelectQuery(table: query.table, predicate: query.predicate)) { $0 }
        // The scan ran the predicate already.
        var unfiltered = query
        unfiltered.predicate = nil
        return try AggregateEvaluator(unfiltered).run(over: rows, rowsOf: { _ in [] })
    }
}
