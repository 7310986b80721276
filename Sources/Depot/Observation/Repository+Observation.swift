import Synchronization

/// When an observation re-queries after commits that touch its table.
public enum ObservationTiming: Sendable, Hashable {
    /// As soon as the consumer asks after a commit (commits made meanwhile coalesce).
    case immediate
    /// Once commits have stopped for the interval: a burst gives one element.
    case debounce(Duration)
    /// At most one element per interval.
    case throttle(Duration)
}

extension Repository {
    /// The results of a query now, then again after every committed transaction that changed them.
    ///
    /// ```swift
    /// for try await list in airports.observe(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
    ///     show(list)
    /// }
    /// ```
    /// Only commits that touch the entity's table re-run the query; identical consecutive results
    /// are not emitted; a rolled-back transaction emits nothing. The query runs when the consumer
    /// asks for the next element, so a slow consumer gets the latest result, never a backlog.
    /// Leaving the loop or cancelling the task ends the observation and releases what it held.
    public func observe(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        timing: ObservationTiming = .immediate
    ) -> QueryObservation<Root> {
        QueryObservation(changes: changes(where: predicate, orderBy: ordering, limit: limit, timing: timing))
    }

    /// Like ``observe(where:orderBy:limit:timing:)``, with each new result's diff against the
    /// previous element (see ``ResultChange``). The first element holds the whole result, inserted.
    public func changes(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        timing: ObservationTiming = .immediate
    ) -> QueryChanges<Root> {
        do {
            guard case .store(let store) = context else {
                throw DepotError(.invalidQuery, "observe the store's repository, not a transaction's")
            }
            return QueryChanges(
                source: .success((store, try query(predicate, ordering, limit: limit, offset: nil))), timing: timing)
        } catch {
            return QueryChanges(source: .failure(error), timing: timing)
        }
    }
}

extension MappedRepository {
    /// The live results of a query as domain models: ``Repository/observe(where:orderBy:limit:timing:)``
    /// on the stored entities, each element mapped through the mapper.
    ///
    /// ```swift
    /// let people = store.repository(PersonRow.self).mapped(by: PersonMapper())
    /// for try await list in people.observe(where: \.city == "Oslo") { show(list) }  // [Person]
    /// ```
    public func observe(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> some AsyncSequence<[Mapper.Model], any Error> & Sendable {
        let mapper = mapper
        return base.observe(where: predicate, orderBy: ordering, limit: limit, timing: timing).map { @Sendable in
            try $0.map(mapper.model)
        }
    }

    /// Like ``observe(where:orderBy:limit:timing:)``, with each result's diff against the previous
    /// element (see ``ResultChange``), computed on the stored entities' keys and values.
    public func changes(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> some AsyncSequence<ResultChange<Mapper.Model>, any Error> & Sendable {
        let mapper = mapper
        return base.changes(where: predicate, orderBy: ordering, limit: limit, timing: timing).map { @Sendable in
            try $0.map(mapper.model)
        }
    }
}

/// The live results of a query: an `AsyncSequence` of arrays (see `Repository.observe`).
public struct QueryObservation<Root: Entity>: AsyncSequence, Sendable {
    public typealias Element = [Root]
    let changes: QueryChanges<Root>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: changes.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: QueryChanges<Root>.Iterator

        public mutating func next() async throws -> [Root]? {
            try await base.next()?.result
        }
    }
}

/// The live results of a query with row-level diffs (see `Repository.changes`).
public struct QueryChanges<Root: Entity>: AsyncSequence, Sendable {
    public typealias Element = ResultChange<Root>
    let source: Result<(any Store, SelectQuery), any Error>
    let timing: ObservationTiming

    public func makeAsyncIterator() -> Iterator {
        Iterator(state: source.map { ObservationState<Root>(store: $0.0, query: $0.1, timing: timing) })
    }

    public struct Iterator: AsyncIteratorProtocol {
        let state: Result<ObservationState<Root>, any Error>

        public mutating func next() async throws -> ResultChange<Root>? {
            try await state.get().next()
        }
    }
}

/// Counts commits to the observed table and wakes the consumer waiting for one.
final class CommitSignal: Sendable {
    private struct State {
        var generation = 0
        var consumed = 0
        var ended = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func bump() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.generation += 1
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    func end() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    var generation: Int { state.withLock { $0.generation } }

    /// Marks every commit so far as handled.
    func consume() { state.withLock { $0.consumed = $0.generation } }

    /// Waits for a commit not yet handled; returns false when cancelled or the store ended.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.generation > state.consumed || state.ended || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
        return state.withLock { $0.generation > $0.consumed } && !Task.isCancelled
    }
}

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
            case .debounce(let interval):
                var seen = signal.generation
                while true {
                    try await Task.sleep(for: interval)
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
