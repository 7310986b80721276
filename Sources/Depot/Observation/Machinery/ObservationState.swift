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
        /// A read failed (its error thrown to the caller): the next call reads whole again,
        /// without waiting for a commit, and diffs against this result.
        var readAgain = false
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
        do {
            let change = try await advance(&last)
            delivered.withLock { $0 = last }
            return change
        } catch {
            // What was delivered stays delivered (`last` is whole at every throw): the caller may
            // call again, and the next change must turn that result into the next one.
            last.readAgain = true
            last.byKey = nil
            delivered.withLock { $0 = last }
            throw error
        }
    }

    /// Waits for a commit that changes the result and returns the change from `last`, which it
    /// updates; `nil` when the observation ends. When it throws, `last` is still the result
    /// delivered before (its arrays change only once nothing more can throw).
    private func advance(_ last: inout Delivered) async throws -> ResultChange<Root>? {
        while true {
            if last.readAgain {
                last.readAgain = false
                signal.consume()
                if let change = try await readWhole(&last, again: true) { return change }
                continue
            }
            guard await signal.wait() else { break }
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
                guard !changed.keys.isEmpty else { continue }  // this commit's rows were read already
                if let change = try await readByKey(changed, order: order, last: &last) {
                    if change.isEmpty { continue }
                    return change
                }
            }
            if let change = try await readWhole(&last) { return change }
        }
        return nil
    }

    /// Reads the whole query again and diffs it against `last`, which it updates; `nil` when the
    /// result is as delivered. `last` changes only once nothing more can throw. `again`: after a
    /// failed read, not the rows that failed it.
    private func readWhole(_ last: inout Delivered, again: Bool = false) async throws -> ResultChange<Root>? {
        let schema = Root.schema
        let rows = try await hub.rows(for: query, again: again)
        // Diffed on stored values: an unchanged result is never decoded, and rows kept
        // unchanged reuse the values delivered before; only new and updated rows are decoded.
        let diff = ResultDiff.rows(from: last.rows, to: rows, keyIndices: query.table.primaryKeyIndices)
        if diff.isEmpty {
            last.rows = rows
            last.byKey = nil
            return nil
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
        last.rows = rows
        last.byKey = nil
        last.result = result
        last.at = ContinuousClock.now
        return diff.change(result: result)
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
        // Decoded before the delivered result is touched: a row that fails leaves it whole.
        let schema = Root.schema
        let decoded = try fresh.map { try schema.decode($0) }
        let byKey = last.byKey ?? KeyedRead.index(last.rows, keyIndices: query.table.primaryKeyIndices)
        var patched = KeyedRead.Patch(rows: last.rows, result: last.result, byKey: byKey)
        // The delivered values go: the patch then changes its arrays in place.
        last.rows = []
        last.result = []
        last.byKey = nil
        guard
            let change = patched.apply(
                fresh, decoded: decoded, changed: changed.keys, keyIndices: query.table.primaryKeyIndices,
                order: order)
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
