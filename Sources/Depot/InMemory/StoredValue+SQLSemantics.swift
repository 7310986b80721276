import Foundation

extension StoredValue {
    /// Orders two non-NULL values as SQL stores do: numbers numerically, text and bytes by byte
    /// order, UUIDs by their 16 bytes. Values of different kinds order by kind
    /// (numbers < text < bytes), as in SQLite.
    package static func sqlOrder(_ lhs: StoredValue, _ rhs: StoredValue) -> Int {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.text(let a), .text(let b)): return compareBytes(a.utf8, b.utf8)
        case (.decimal(let a), .decimal(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.blob(let a), .blob(let b)): return compareBytes(a, b)
        case (.uuid(let a), .uuid(let b)):
            return withUnsafeBytes(of: a.uuid) { left in
                withUnsafeBytes(of: b.uuid) { right in compareBytes(left, right) }
            }
        default:
            let (rankA, rankB) = (lhs.kindRank, rhs.kindRank)
            if rankA != rankB { return rankA < rankB ? -1 : 1 }
            if case .decimal(let a) = lhs, let b = rhs.decimalValue { return a < b ? -1 : (a == b ? 0 : 1) }
            if case .decimal(let b) = rhs, let a = lhs.decimalValue { return a < b ? -1 : (a == b ? 0 : 1) }
            let (a, b) = (lhs.numericValue ?? 0, rhs.numericValue ?? 0)
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }

    /// ``sqlOrder(_:_:)`` with NULL before every value: how `ORDER BY` sorts, ascending.
    package static func sqlOrderNullsFirst(_ lhs: StoredValue, _ rhs: StoredValue) -> Int {
        switch (lhs.isNull, rhs.isNull) {
        case (true, true): 0
        case (true, false): -1
        case (false, true): 1
        case (false, false): sqlOrder(lhs, rhs)
        }
    }

    /// SQL comparison: `nil` (unknown) when either side is NULL.
    package static func sqlCompare(_ lhs: StoredValue, _ op: ComparisonOperator, _ rhs: StoredValue) -> Bool? {
        if lhs.isNull || rhs.isNull { return nil }
        let order = sqlOrder(lhs, rhs)
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: 0
        case .bool, .integer, .double, .decimal, .date: 1
        case .text: 2
        case .uuid, .blob: 3
        }
    }

    private var numericValue: Double? {
        switch self {
        case .bool(let value): value ? 1 : 0
        case .integer(let value): Double(value)
        case .double(let value): value
        case .date(let value): value.timeIntervalSinceReferenceDate
        case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
        default: nil
        }
    }

    private var decimalValue: Decimal? {
        switch self {
        case .integer(let value): Decimal(value)
        case .double(let value): Decimal(value)
        case .bool(let value): value ? 1 : 0
        default: nil
        }
    }
}

private func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
    var left = a.makeIterator()
    var right = b.makeIterator()
    while true {
        switch (left.next(), right.next()) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
        }
    }
}
