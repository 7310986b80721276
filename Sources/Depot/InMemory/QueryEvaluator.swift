/// Evaluates query trees over rows of stored values, with SQL semantics: what the in-memory store
/// runs where SQL stores run SQL.
package struct QueryEvaluator: Sendable {
    package typealias Condition = @Sendable ([StoredValue]) -> Bool?

    package typealias TableRows = @Sendable (TableDescription) throws -> [[StoredValue]]

    let table: TableDescription
    /// The rows of another table, for subqueries.
    let rowsOf: TableRows

    package init(table: TableDescription, rowsOf: @escaping TableRows = { _ in [] }) {
        self.table = table
        self.rowsOf = rowsOf
    }

    private func index(_ column: String) throws -> Int {
        try table.requireColumn(column)
    }

    /// Compiles `node` once into a closure evaluated per row (three-valued: `nil` is unknown).
    package func condition(_ node: PredicateNode) throws -> Condition {
        switch node {
        case .constant(let value):
            return { _ in value }
        case .compare(let column, let op, let value):
            let index = try index(column)
            return { row in StoredValue.sqlCompare(row[index], op, value) }
        case .isNull(let column):
            let index = try index(column)
            return { row in row[index].isNull }
        case .isNotNull(let column):
            let index = try index(column)
            return { row in !row[index].isNull }
        case .isIn(let column, let values):
            let index = try index(column)
            if values.isEmpty { return { _ in false } }
            let hasNull = values.contains { $0.isNull }
            if values.count > 16 {
                // Hashing agrees with SQL equality within one column's kind.
                let set = Set(values)
                return { row in
                    let value = row[index]
                    if value.isNull { return nil }
                    return set.contains(value) ? true : (hasNull ? nil : false)
                }
            }
            return { row in
                let value = row[index]
                if value.isNull { return nil }
                if values.contains(where: { StoredValue.sqlCompare(value, .equal, $0) == true }) { return true }
                return hasNull ? nil : false
            }
        case .text(let column, let op, let needle, let matching):
            let index = try index(column)
            let pin = matching.apply(needle)
            return { row in
                guard case .text(let raw) = row[index] else { return row[index].isNull ? nil : false }
                let text = matching.apply(raw)
                switch op {
                case .contains: return TextFolding.containsBytes(text, pin)
                case .hasPrefix: return TextFolding.hasPrefixBytes(text, pin)
                case .hasSuffix: return TextFolding.hasSuffixBytes(text, pin)
                }
            }
        case .and(let nodes):
            let parts = try nodes.map(condition)
            return { row in
                var result: Bool? = true
                for part in parts {
                    switch part(row) {
                    case false?: return false
                    case nil: result = nil
                    case true?: break
                    }
                }
                return result
            }
        case .or(let nodes):
            let parts = try nodes.map(condition)
            return { row in
                var result: Bool? = false
                for part in parts {
                    switch part(row) {
                    case true?: return true
                    case nil: result = nil
                    case false?: break
                    }
                }
                return result
            }
        case .not(let inner):
            let part = try condition(inner)
            return { row in part(row).map { !$0 } }
        case .matches(let column, let tokens, let matching):
            let index = try index(column)
            return { row in
                guard case .text(let text) = row[index] else { return tokens.isEmpty }
                return TextSearch.matches(text, tokens: tokens, matching)
            }
        case .withinDistance(let latitudeName, let longitudeName, let center, let kilometers):
            let latitude = try index(latitudeName)
            let longitude = try index(longitudeName)
            return { row in
                guard let lat = row[latitude].doubleValue, let lon = row[longitude].doubleValue else { return nil }
                guard (-90...90).contains(lat), (-180...180).contains(lon) else { return false }
                return GeoDistance.haversineKilometers(
                    latitude1: center.latitude, longitude1: center.longitude, latitude2: lat, longitude2: lon)
                    <= kilometers
            }
        case .isInSubquery(let column, let subquery):
            // Uncorrelated: the selected values are computed once, then each row is a lookup.
            let index = try index(column)
            let inner = QueryEvaluator(table: subquery.table, rowsOf: rowsOf)
            let selected = try inner.table.requireColumn(subquery.column)
            let matches = try subquery.predicate.map(inner.condition) ?? { _ in true }
            var values: Set<StoredValue> = []
            for row in try rowsOf(subquery.table) where !row[selected].isNull && matches(row) == true {
                values.insert(row[selected])
            }
            let set = values
            return { row in
                let value = row[index]
                if value.isNull { return set.isEmpty ? false : nil }
                return set.contains(value)
            }
        }
    }

    /// Compiles the order into a "sorts before" function; NULL is smallest, distance NULLs last.
    package func areInIncreasingOrder(_ terms: [OrderTerm]) throws -> @Sendable ([StoredValue], [StoredValue]) -> Bool {
        typealias Compare = @Sendable ([StoredValue], [StoredValue]) -> Int
        let comparators: [Compare] = try terms.map { term -> Compare in
            switch term {
            case .column(let name, let descending):
                let index = try index(name)
                return { a, b in
                    let order = StoredValue.sqlOrderNullsFirst(a[index], b[index])
                    return descending ? -order : order
                }
            case .text(let name, let descending, let matching):
                let index = try index(name)
                return { a, b in
                    let order: Int
                    switch (a[index], b[index]) {
                    case (.null, .null): order = 0
                    case (.null, _): order = -1
                    case (_, .null): order = 1
                    case (.text(let x), .text(let y)):
                        order = StoredValue.sqlOrder(.text(matching.apply(x)), .text(matching.apply(y)))
                    default: order = StoredValue.sqlOrder(a[index], b[index])
                    }
                    return descending ? -order : order
                }
            case .relevance(let name, let tokens, let matching):
                let index = try index(name)
                @Sendable func key(_ row: [StoredValue]) -> (exact: Int, length: Int?) {
                    guard case .text(let text) = row[index] else { return (0, nil) }
                    return (TextSearch.exactWords(text, tokens: tokens, matching), text.unicodeScalars.count)
                }
                return { a, b in
                    let (x, y) = (key(a), key(b))
                    if x.exact != y.exact { return x.exact > y.exact ? -1 : 1 }
                    switch (x.length, y.length) {
                    case (nil, nil): return 0
                    case (nil, _): return -1
                    case (_, nil): return 1
                    case (let m?, let n?): return m < n ? -1 : (m == n ? 0 : 1)
                    }
                }
            case .distance(let latitudeName, let longitudeName, let point):
                let latitude = try index(latitudeName)
                let longitude = try index(longitudeName)
                @Sendable func distance(_ row: [StoredValue]) -> Double? {
                    guard let lat = row[latitude].doubleValue, let lon = row[longitude].doubleValue else { return nil }
                    return GeoDistance.haversineKilometers(
                        latitude1: point.latitude, longitude1: point.longitude, latitude2: lat, longitude2: lon)
                }
                return { a, b in
                    switch (distance(a), distance(b)) {
                    case (nil, nil): return 0
                    case (nil, _): return 1
                    case (_, nil): return -1
                    case (let x?, let y?): return x < y ? -1 : (x == y ? 0 : 1)
                    }
                }
            }
        }
        return { a, b in
            for comparator in comparators {
                let order = comparator(a, b)
                if order != 0 { return order < 0 }
            }
            return false
        }
    }

    /// Runs `query` over `rows`: filter, sort, offset, limit.
    package func run(_ query: SelectQuery, over rows: some Sequence<[StoredValue]>) throws -> [[StoredValue]] {
        var matched: [[StoredValue]]
        if let predicate = query.predicate {
            let condition = try condition(predicate)
            matched = rows.filter { condition($0) == true }
        } else {
            matched = Array(rows)
        }
        let before = try areInIncreasingOrder(query.ordering)
        matched.sort(by: before)
        if let group = query.limitPerGroup {
            let column = try index(group.column)
            var counts: [StoredValue: Int] = [:]
            matched = matched.filter { row in
                let seen = counts[row[column], default: 0]
                counts[row[column]] = seen + 1
                return seen < group.limit
            }
        }
        let start = min(query.offset ?? 0, matched.count)
        let end = query.limit.map { start + min($0, matched.count - start) } ?? matched.count
        return Array(matched[start..<end])
    }
}

extension StoredValue {
    /// The value as a Double, for numeric columns; `nil` for NULL and non-numbers.
    package var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}
