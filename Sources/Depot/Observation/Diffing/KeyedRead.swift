/// An observer's re-read of only the rows a commit named by key: the query narrowed to those
/// keys, and the previous result patched with what it returns (each row put where the query's
/// order puts it), with the diff a whole re-read would give.
enum KeyedRead {
    typealias Row = [StoredValue]

    /// How `query`'s rows sort, when a result can be patched row by row on `store`: one table,
    /// whole rows, no limit or offset, ordered by columns alone (the store sorts them as
    /// ``QueryEvaluator`` does, which the stores' differential tests hold them to), on a store
    /// that numbers its commits. `nil` otherwise: the observer reads its whole query again.
    static func order(of query: SelectQuery, on store: any Store) -> (@Sendable (Row, Row) -> Bool)? {
        guard (store as? any CommitProgressReporting)?.commitProgress != nil, query.tables.count == 1,
            query.limit == nil, query.offset == nil, query.limitPerGroup == nil, query.columns == nil,
            query.lock == nil, !query.table.primaryKey.isEmpty,
            query.table.primaryKeyIndices.count == query.table.primaryKey.count,
            query.ordering.allSatisfy({
                switch $0 {
                case .column, .text: true
                case .distance, .relevance: false
                }
            })
        else { return nil }
        return try? QueryEvaluator(table: query.table).areInIncreasingOrder(query.ordering)
    }

    /// `query` narrowed to the rows of `keys` (values in primary-key order).
    static func query(_ query: SelectQuery, keys: Set<Row>) -> SelectQuery {
        let named = PredicateNode.matching(keys: keys, primaryKey: query.table.primaryKey)
        var narrowed = query
        narrowed.predicate = query.predicate.map { .and([$0, named]) } ?? named
        return narrowed
    }

    /// `rows` by their key.
    static func index(_ rows: [Row], keyIndices: [Int]) -> [Row: Row] {
        var byKey: [Row: Row] = [:]
        byKey.reserveCapacity(rows.count)
        for row in rows { byKey[keyIndices.map { row[$0] }] = row }
        return byKey
    }

    /// A delivered result being patched.
    struct Patch<Element: Sendable> {
        var rows: [Row]
        var result: [Element]
        var byKey: [Row: Row]

        /// Replaces the rows keyed in `changed` (and any row with the key of a `fresh` one) by
        /// `fresh`, the rows of those keys the query returns now, in its order (`decoded`: each
        /// as an element; an unchanged row keeps the element delivered before). Returns the diff
        /// (as ``ResultDiff`` would compute it on the whole results), or `nil`, changing
        /// nothing, when a delivered row is not where `order` puts it or `fresh` is out of order:
        /// the store sorts otherwise, and the caller reads the whole query again.
        mutating func apply(
            _ fresh: [Row], decoded: [Element], changed: Set<Row>, keyIndices: [Int], order: (Row, Row) -> Bool
        ) -> ResultChange<Element>? {
            func key(_ row: Row) -> Row { keyIndices.map { row[$0] } }
            func firstNotBefore(_ row: Row) -> Int {
                var low = 0
                var high = rows.count
                while low < high {
                    let middle = (low + high) / 2
                    if order(rows[middle], row) { low = middle + 1 } else { high = middle }
                }
                return low
            }
            for index in fresh.indices.dropFirst() where !order(fresh[index - 1], fresh[index]) { return nil }
            let freshKeys = fresh.map(key)

            // Where each delivered row that goes (it changed, or was named) stands now.
            var leaving: [(index: Int, key: Row)] = []
            for gone in changed.union(freshKeys) {
                guard let row = byKey[gone] else { continue }
                let index = firstNotBefore(row)
                guard index < rows.count, rows[index] == row else { return nil }
                leaving.append((index, gone))
            }
            leaving.sort { $0.index < $1.index }
            // The usual change: one row, written in place, still between its neighbours. Replaced
            // where it stands (no shifting of the arrays).
            if leaving.count == 1, fresh.count == 1, leaving[0].key == freshKeys[0] {
                let index = leaving[0].index
                let row = fresh[0]
                if (index == 0 || order(rows[index - 1], row))
                    && (index == rows.count - 1 || order(row, rows[index + 1]))
                {
                    guard rows[index] != row else {
                        return ResultChange(result: result, inserted: [], removed: [], updated: [], moved: [])
                    }
                    let element = decoded[0]
                    rows[index] = row
                    result[index] = element
                    byKey[freshKeys[0]] = row
                    return ResultChange(result: result, inserted: [], removed: [], updated: [index], moved: [])
                }
            }
            var left: [Row: (index: Int, row: Row, element: Element, before: Int)] = [:]
            for (position, leaver) in leaving.enumerated() {
                // `before`: delivered rows that stay, ahead of this one.
                left[leaver.key] = (leaver.index, rows[leaver.index], result[leaver.index], leaver.index - position)
            }
            for leaver in leaving.reversed() {
                rows.remove(at: leaver.index)
                result.remove(at: leaver.index)
                byKey[leaver.key] = nil
            }

            var inserted: [Int] = []
            var updated: [Int] = []
            var moved: [(from: Int, to: Int)] = []
            var lastStaying = -1
            for (position, row) in fresh.enumerated() {
                let index = firstNotBefore(row)
                let rowKey = freshKeys[position]
                let previous = left.removeValue(forKey: rowKey)
                let element = previous.flatMap { $0.row == row ? $0.element : nil } ?? decoded[position]
                rows.insert(row, at: index)
                result.insert(element, at: index)
                byKey[rowKey] = row
                guard let previous else {
                    inserted.append(index)
                    continue
                }
                // In place: among the same staying rows as before, and after the rows before it
                // that stayed in place too.
                if index - position == previous.before, previous.index > lastStaying {
                    lastStaying = previous.index
                } else {
                    moved.append((from: previous.index, to: index))
                }
                if previous.row != row { updated.append(index) }
            }
            let removed = left.values.map(\.index).sorted()
            return ResultChange(result: result, inserted: inserted, removed: removed, updated: updated, moved: moved)
        }
    }
}
