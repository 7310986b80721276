import Synchronization

/// One observer's state: its place in the store's hub and the last result it delivered.
final class ObservationState<Root: Entity>: Sendable {
    typealias Row = ObservationHub.Row
    private struct Delivered {
        var rows: [Row]
        var result: [Root]
        var at: ContinuousClock.Instant?
    }
    let hub: ObservationHub
    let query: SelectQuery
    let timing: ObservationTiming
    let signal = CommitSignal()
    private let delivered = Mutex<Delivered?>(nil)

    init(store: any Store, query: SelectQuery, timing: ObservationTiming) {
        self.query = query
        self.timing = timing
        // Registered before the first fetch, so no commit falls between the two.
        hub = ObservationHub.hub(for: store)
        hub.register(signal, for: query)
    }

    deinit { hub.unregister(signal, for: query) }

    func next() async throws -> ResultChange<Root>? {
        if Task.isCancelled { return nil }
        let schema = Root.schema
        guard var last = delivered.withLock({ $0 }) else {
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
            let rows = try await hub.rows(for: query)
            // Diffed on stored values: an unchanged result is never decoded, and rows kept
            // unchanged reuse the values delivered before; only new and updated rows are decoded.
            let diff = ResultDiff.rows(from: last.rows, to: rows, keyIndices: query.table.primaryKeyIndices)
            last.rows = rows
            if diff.isEmpty {
                delivered.withLock { $0?.rows = rows }
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
}
