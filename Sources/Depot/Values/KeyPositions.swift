/// Positions (row numbers, list indices) by a one-column key value: what batches check for
/// duplicate keys and includes match children to parents by.
///
/// Keys that are all integers (the usual generated ids) are hashed as `Int64`, not as
/// ``StoredValue``s: no switch over the value's kind and no conversion to `Double` per probe.
/// The first key of another kind moves every entry to a table of ``StoredValue``s. Either way a
/// key finds what `==` on ``StoredValue`` finds (an integer equals the double of the same value).
package struct KeyPositions: Sendable {
    private var integers: [Int64: Int]
    /// Every entry, once a key that is not an integer arrived.
    private var values: [StoredValue: Int]?

    package init(capacity: Int = 0) {
        integers = Dictionary(minimumCapacity: capacity)
    }

    /// `key` as the integer it equals, if it equals one.
    private static func integer(_ key: StoredValue) -> Int64? {
        switch key {
        case .integer(let integer): integer
        case .double(let double): Int64(exactly: double)
        default: nil
        }
    }

    /// The position stored for `key`.
    package subscript(key: StoredValue) -> Int? {
        if let values { return values[key] }
        return Self.integer(key).flatMap { integers[$0] }
    }

    /// Stores `position` for `key`; returns the position it replaces.
    @discardableResult
    package mutating func updateValue(_ position: Int, forKey key: StoredValue) -> Int? {
        if values == nil, let integer = Self.integer(key) { return integers.updateValue(position, forKey: integer) }
        if values == nil {
            var moved: [StoredValue: Int] = Dictionary(minimumCapacity: integers.capacity)
            for (integer, position) in integers { moved[.integer(integer)] = position }
            integers = [:]
            values = moved
        }
        return values?.updateValue(position, forKey: key)
    }

    /// Stores `position` for `key` unless it has one; returns whether it was stored.
    @discardableResult
    package mutating func insert(_ position: Int, forKey key: StoredValue) -> Bool {
        guard self[key] == nil else { return false }
        updateValue(position, forKey: key)
        return true
    }

    /// How many keys have a position.
    package var count: Int { values?.count ?? integers.count }
}
