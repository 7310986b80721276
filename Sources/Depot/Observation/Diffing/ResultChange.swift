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
    ///
    /// `previous` must be the result this change follows (the one delivered before it). Given
    /// another array, whose size does not fit the change's positions, it returns ``result``
    /// itself rather than index out of bounds.
    public func applied(to previous: [Element]) -> [Element] {
        let gone = Set(removed).union(moved.map(\.from))
        let kept = previous.count - gone.count
        let positions = inserted + moved.map(\.to) + updated
        guard gone.allSatisfy({ previous.indices.contains($0) }), positions.allSatisfy({ result.indices.contains($0) }),
            kept + inserted.count + moved.count == result.count
        else { return result }
        var rows = previous.enumerated().filter { !gone.contains($0.offset) }.map(\.element)
        let arriving = (inserted.map { ($0, result[$0]) } + moved.map { ($0.to, result[$0.to]) }).sorted { $0.0 < $1.0 }
        for (index, element) in arriving {
            guard index <= rows.count else { return result }
            rows.insert(element, at: index)
        }
        for index in updated { rows[index] = result[index] }
        return rows
    }
}

/// Computes keyed diffs between two results.
enum ResultDiff {
    /// How the rows of a new result relate to the previous one.
    struct Rows {
        var inserted: [Int] = []
        var removed: [Int] = []
        var updated: [Int] = []
        var moved: [(from: Int, to: Int)] = []
        /// For each new row, the index of the previous row with its key (nil when inserted).
        var sources: [Int?] = []

        var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && updated.isEmpty && moved.isEmpty }

        /// The change, with `result` as the new result.
        func change<Element>(result: [Element]) -> ResultChange<Element> {
            ResultChange(result: result, inserted: inserted, removed: removed, updated: updated, moved: moved)
        }
    }

    /// The diff from `old` to `new`: rows are stored values, identified by the values at
    /// `keyIndices` (the primary key) and compared whole.
    ///
    /// Rows that keep their key at both ends (the common case: one row changed in place) are
    /// compared in one linear pass without hashing; only the middle where keys differ is matched by
    /// hashed keys, and a longest increasing subsequence keeps the most rows in place there, so
    /// the fewest moves are reported. O(n) for an update in place, O(n log n) at worst.
    static func rows(from old: [[StoredValue]], to new: [[StoredValue]], keyIndices: [Int]) -> Rows {
        func sameKey(_ a: [StoredValue], _ b: [StoredValue]) -> Bool {
            for index in keyIndices where a[index] != b[index] { return false }
            return true
        }
        var diff = Rows()
        diff.sources = [Int?](repeating: nil, count: new.count)
        var changed = [Bool](repeating: false, count: new.count)
        // Equal rows have equal keys: one comparison for the (usual) unchanged row.
        func matches(_ from: Int, _ to: Int) -> Bool {
            if old[from] == new[to] { return true }
            guard sameKey(old[from], new[to]) else { return false }
            changed[to] = true
            return true
        }
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix < shorter, matches(prefix, prefix) {
            diff.sources[prefix] = prefix
            prefix += 1
        }
        var suffix = 0
        while suffix < shorter - prefix, matches(old.count - 1 - suffix, new.count - 1 - suffix) {
            diff.sources[new.count - 1 - suffix] = old.count - 1 - suffix
            suffix += 1
        }

        // The middle: keys matched through a hash table.
        let oldMiddle = prefix..<(old.count - suffix)
        let newMiddle = prefix..<(new.count - suffix)
        func key(_ row: [StoredValue]) -> [StoredValue] { keyIndices.map { row[$0] } }
        var oldIndex: [[StoredValue]: Int] = [:]
        oldIndex.reserveCapacity(oldMiddle.count)
        for index in oldMiddle { oldIndex[key(old[index])] = index }
        var kept: [(old: Int, new: Int)] = []
        var arrived = Set<Int>()
        for index in newMiddle {
            if let previous = oldIndex[key(new[index])] {
                kept.append((previous, index))
                diff.sources[index] = previous
                arrived.insert(previous)
                changed[index] = old[previous] != new[index]
            } else {
                diff.inserted.append(index)
            }
        }
        diff.removed = oldMiddle.filter { !arrived.contains($0) }
        let stay = Set(longestIncreasingSubsequence(kept.map(\.old)).map { kept[$0].new })
        diff.moved = kept.filter { !stay.contains($0.new) }.map { (from: $0.old, to: $0.new) }
        diff.updated = changed.indices.filter { changed[$0] }
        return diff
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
