import Synchronization

/// One observer's state: its place in the store's hub and the last result it delivered.
final class ObservationState<Root: Entity>: Sendable {
    typealias Row = ObservationHub.Row
    private struct Delivered {
        var rows: [Row]
        var result: [Root]
        var at: ContinuousClock.Instant?
        /// The delivered rows by key, for reading changed rows alone (built on first use).
        var byKey: [[StoredValue]: Row]?
    }
    let hub: ObservationHub
    let query: SelectQuery
    let timing: ObservationTiming
    let signal = CommitSignal()
    /// How the query's rows sort, when a row's place can be found without the store (then
    /// commits that name their rows by key are read by key).
    private let order: (@Sendable (Row, Row) -> Bool)?
    private let delivered = Mutex<Delivered?>(nil)

    init(store: any Store, query: SelectQuery, timing: ObservationTiming) {
        self.query = query
        self.timing = timing
        order = KeyedRead.order(of: query, on: store)
        // Registered before the first fetch, so no commit falls between the two.
        hub = ObservationHub.hub(for: store)
        if order != nil {
            hub.registerKeyed(signal, for: query)
        } else {
            hub.register(signal, for: query)
        }
    }

    deinit { hub.unregister(signal, for: query) }

    func next() async throws -> ResultChange<Root>? {
        if Task.isCancelled { return nil }
        let schema = Root.schema
        // Taken out while this call works on it, so its arrays change in place (not copied).
        guard var last = delivered.withLock({ $0.take() }) else {
            signal.consume()
            let rows = try await hub.rows(for: query)
            let result = try rows.map { try schema.decode($0) }
            delivered.withLock { $0 = Delivered(rows: rows, result: result, at: ContinuousClock.now) }
            return ResultChange(result: result, inserted: Array(rows.indices), removed: [], updated: [], moved: [])
        }
        while await signal.wait() {
            switch timing {
            case .immediate:
                break
            case .debounce(let interval, let maxWait):
                // Past the deadline (maxWait after the first commit waited for) it reads anyway.
                let deadline = maxWait.map { ContinuousClock.now + $0 }
                var seen = signal.generation
                while true {
                    var nap = interval
                    if let deadline {
                        let left = deadline - ContinuousClock.now
                        if left <= .zero { break }
                        nap = min(nap, left)
                    }
                    try await Task.sleep(for: nap)
                    let now = signal.generation
                    if now == seen { break }
                    seen = now
                }
            case .throttle(let interval):
                if let at = last.at {
                    let due = at + interval
                    if due > ContinuousClock.now { try await Task.sleep(until: due) }
                }
            }
            signal.consume()
            if let order, let changed = hub.changedRows(of: signal), !changed.anyRow {
                guard !changed.keys.isEmpty else {  // this commit's rows were read already
                    delivered.withLock { $0 = last }
                    continue
                }
                if let change = try await readByKey(changed, order: order, last: &last) {
                    delivered.withLock { $0 = last }
                    if change.isEmpty { continue }
                    return change
                }
            }
            let rows = try await hub.rows(for: query)
            last.byKey = nil
            // Diffed on stored values: an unchanged result is never decoded, and rows kept
            // unchanged reuse the values delivered before; only new and updated rows are decoded.
            let diff = ResultDiff.rows(from: last.rows, to: rows, keyIndices: query.table.primaryKeyIndices)
            last.rows = rows
            if diff.isEmpty {
                delivered.withLock { $0 = last }
                continue
            }
            var result: [Root] = []
            result.reserveCapacity(rows.count)
            var updated = diff.updated.makeIterator()
            var nextUpdated = updated.next()
            for (index, row) in rows.enumerated() {
                if index == nextUpdated {
                    nextUpdated = updated.next()
                    result.append(try schema.decode(row))
                } else if let source = diff.sources[index] {
                    result.append(last.result[source])
                } else {
                    result.append(try schema.decode(row))
                }
            }
            last.result = result
            last.at = ContinuousClock.now
            delivered.withLock { $0 = last }
            return diff.change(result: result)
        }
        return nil
    }

    /// Reads the rows of `changed` alone and patches `last` with them; `nil` (with `last` as it
    /// was) when the result must be read whole: a commit came or was under way during the read
    /// (the rows read and the rest might not be of one moment), or the rows were not where
    /// ``order`` puts them.
    private func readByKey(
        _ changed: ObservationHub.ChangedRows, order: @escaping @Sendable (Row, Row) -> Bool, last: inout Delivered
    ) async throws -> ResultChange<Root>? {
        let store = hub.store
        let keyed = KeyedRead.query(query, keys: changed.keys)
        // A commit under way or announced since: the rows read could not be trusted.
        guard hub.noCommitSince(changed.asOf) else { return nil }
        let started = ContinuousClock.now
        let since = hub.lastCommit(to: query.table.name)
        let fresh = try await hub.readByKey { try await FreshReads.run { try await store.fetch(keyed) { $0 } } }
        guard hub.noCommitSince(changed.asOf) else { return nil }
        let byKey = last.byKey ?? KeyedRead.index(last.rows, keyIndices: query.table.primaryKeyIndices)
        var patched = KeyedRead.Patch(rows: last.rows, result: last.result, byKey: byKey)
        // The delivered values go: the patch then changes its arrays in place.
        last.rows = []
        last.result = []
        last.byKey = nil
        let schema = Root.schema
        guard
            let change = try patched.apply(
                fresh, changed: changed.keys, keyIndices: query.table.primaryKeyIndices, order: order,
                decode: { try schema.decode($0) })
        else {
            (last.rows, last.result) = (patched.rows, patched.result)
            return nil
        }
        last.rows = patched.rows
        last.result = patched.result
        last.byKey = patched.byKey
        hub.countKeyedRead()
        if !change.isEmpty { last.at = ContinuousClock.now }
        let ended = ContinuousClock.now
        hub.reportKeyedRead(duration: ended - started, sinceCommit: since.map { ended - $0 })
        return change
    }
}
