/// A new query result and how it differs from the previous one, keyed by primary key, as index
/// sets a list UI applies in one batch update.
///
/// Apply it the way table and collection views do: delete ``removed`` and the sources of
/// ``moved`` (old indices), insert ``inserted`` and the destinations of ``moved`` (new indices),
/// then reload ``updated`` (new indices). ``applied(to:)`` does exactly that, and gives ``result``.
///
/// ```swift
/// for try await change in airports.changes(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
///     table.performBatchUpdates {
///         table.deleteRows(at: change.removed.map { IndexPath(row: $0, section: 0) })
///         table.insertRows(at: change.inserted.map { IndexPath(row: $0, section: 0) })
///         for move in change.moved { table.moveRow(at: …move.from, to: …move.to) }
///     }
///     table.reloadRows(at: change.updated.map { IndexPath(row: $0, section: 0) })
/// }
/// ```
public struct ResultChange<Element: Sendable>: Sendable {
    /// The whole new result.
    public var result: [Element]
    /// Indices in the new result of rows whose key was not in the previous one, ascending.
    public var inserted: [Int]
    /// Indices in the previous result of rows whose key is gone, ascending.
    public var removed: [Int]
    /// Indices in the new result of rows with the same key but other values, ascending.
    public var updated: [Int]
    /// Rows kept but moved: index in the previous result, index in the new one.
    public var moved: [(from: Int, to: Int)]

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && updated.isEmpty && moved.isEmpty }

    /// The same change with each row of ``result`` transformed (e.g. entities into domain models);
    /// the index sets are unchanged.
    public func map<T: Sendable>(_ transform: (Element) throws -> T) rethrows -> ResultChange<T> {
        ResultChange<T>(
            result: try result.map(transform), inserted: inserted, removed: removed, updated: updated, moved: moved)
    }

    /// Applies this change to the previous result, as a list UI would; the outcome equals ``result``.
    public func applied(to previous: [Element]) -> [Element] {
        let gone = Set(removed).union(moved.map(\.from))
        var rows = previous.enumerated().filter { !gone.contains($0.offset) }.map(\.element)
        let arriving = (inserted.map { ($0, result[$0]) } + moved.map { ($0.to, result[$0.to]) }).sorted { $0.0 < $1.0 }
        for (index, element) in arriving { rows.insert(element, at: index) }
        for index in updated { rows[index] = result[index] }
        return rows
    }
}

/// Computes keyed diffs between two results.
enum ResultDiff {
    /// The change from `old` to `new`, rows identified by `key` and compared by `values`.
    ///
    /// O(n log n) in the result sizes: one pass to match keys, and a longest increasing
    /// subsequence to keep the most rows in place and report the fewest moves.
    static func change<Element>(
        from old: [(key: [StoredValue], values: [StoredValue])],
        to new: [(key: [StoredValue], values: [StoredValue])],
        result: [Element]
    ) -> ResultChange<Element> {
        var oldIndex: [[StoredValue]: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, row) in old.enumerated() { oldIndex[row.key] = index }
        var newKeys: Set<[StoredValue]> = []
        newKeys.reserveCapacity(new.count)
        var inserted: [Int] = []
        var updated: [Int] = []
        var kept: [(old: Int, new: Int)] = []
        for (index, row) in new.enumerated() {
            newKeys.insert(row.key)
            if let previous = oldIndex[row.key] {
                kept.append((previous, index))
                if old[previous].values != row.values { updated.append(index) }
            } else {
                inserted.append(index)
            }
        }
        let removed = old.indices.filter { !newKeys.contains(old[$0].key) }
        let stay = Set(longestIncreasingSubsequence(kept.map(\.old)).map { kept[$0].new })
        let moved = kept.filter { !stay.contains($0.new) }.map { (from: $0.old, to: $0.new) }
        return ResultChange(result: result, inserted: inserted, removed: removed, updated: updated, moved: moved)
    }

    /// Positions in `values` of one longest strictly increasing subsequence.
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result: [Int] = []
        var position = tails.last ?? -1
        while position >= 0 {
            result.append(position)
            position = previous[position]
        }
        return result.reversed()
    }
}
