import Synchronization

/// The observers of one store: a single commit subscription fanned out to them, and one shared
/// query per distinct query and commit generation, however many observers run it.
final class ObservationHub: Sendable {
    typealias Row = [StoredValue]

    private struct Shared {
        var generation: Int
        var epoch: Int
        var task: Task<[Row], any Error>
    }
    private struct State {
        var generations: [String: Int] = [:]
        /// Moves when any table may have changed (``StoreCommit/mayHaveChangedAnything``).
        var epoch = 0
        var signals: [ObjectIdentifier: (tables: Set<String>, signal: CommitSignal)] = [:]
        var shared: [SelectQuery: Shared] = [:]
        var observers: [SelectQuery: Int] = [:]
        /// When a commit touching each table (or, for `epoch`, any table) was announced: kept only
        /// for a store that reports observation metrics.
        var committedAt: [String: ContinuousClock.Instant] = [:]
        var epochAt: ContinuousClock.Instant?
        /// The rows each observer that re-reads by key must read again.
        var keyed: [ObjectIdentifier: ChangedRows] = [:]
        /// The number of the last commit received (``StoreCommit/sequence``).
        var received = 0
    }

    /// The rows of one table an observer must read again: those keyed, or (`anyRow`) all of them.
    struct ChangedRows: Sendable {
        let table: String
        var keys: Set<[StoredValue]> = []
        var anyRow = false
        /// The number of the last commit whose rows are counted in (set when they are taken).
        var asOf = 0

        mutating func add(_ commit: StoreCommit, missedSome: Bool) {
            guard !anyRow else { return }
            if missedSome || commit.mayHaveChangedAnything {
                anyRow = true
            } else if commit.tables.contains(table) {
                guard let changed = commit.changedKeys[table] else {
                    anyRow = true
                    return
                }
                keys.formUnion(changed)
                if keys.count > StoreCommit.keyLimit { anyRow = true }
            }
            if anyRow { keys = [] }
        }
    }

    let store: any Store
    /// Where re-queries are reported, when the store measures them.
    private let reporting: (any ObservationReporting)?
    private let state = Mutex(State())
    /// One re-query at a time per store: however many observers wake, they use one core at most
    /// for their queries, and the writer keeps the other (observers never starve the writer).
    private let requeries = AsyncLock()
    private let listener: Mutex<Task<Void, Never>?> = Mutex(nil)
    /// How many results were patched with rows read by key (not read whole).
    private let keyedReads = Atomic<Int>(0)

    func countKeyedRead() { keyedReads.add(1, ordering: .relaxed) }

    /// How many observers' results on `store` were patched with rows read by key (see
    /// ``keyedObservationReads(on:)``).
    static func keyedReads(on store: any Store) -> Int {
        registry.withLock { $0[ObjectIdentifier(store)]?.hub?.keyedReads.load(ordering: .relaxed) ?? 0 }
    }

    private static let registry = Mutex<[ObjectIdentifier: WeakHub]>([:])
    private struct WeakHub { weak var hub: ObservationHub? }

    /// The hub of `store`, created on first use and released with its last observer.
    static func hub(for store: any Store) -> ObservationHub {
        let id = ObjectIdentifier(store)
        return registry.withLock { hubs in
            if let hub = hubs[id]?.hub { return hub }
            let hub = ObservationHub(store: store)
            hubs = hubs.filter { $0.value.hub != nil }
            hubs[id] = WeakHub(hub: hub)
            return hub
        }
    }

    private init(store: any Store) {
        self.store = store
        reporting = (store as? any ObservationReporting).flatMap { $0.isReportingObservations ? $0 : nil }
        let commits = store.commits()
        // Commits numbered up to here were made before any observer of this hub read.
        let published = (store as? any CommitProgressReporting)?.commitProgress?.published ?? 0
        state.withLock { $0.received = published }
        let task = Task { [weak self] in
            for await commit in commits {
                guard let self else { return }
                self.received(commit)
            }
            self?.ended()
        }
        listener.withLock { $0 = task }
    }

    deinit {
        listener.withLock { $0?.cancel() }
    }

    private func received(_ commit: StoreCommit) {
        let now = reporting == nil ? nil : ContinuousClock.now
        let woken = state.withLock { state -> [CommitSignal] in
            // A commit missed (a subscriber keeps the newest 256) or not numbered: rows read by
            // key may be stale anywhere.
            let missedSome = commit.sequence.map { $0 > state.received + 1 } ?? true
            if let sequence = commit.sequence { state.received = max(state.received, sequence) }
            for id in state.keyed.keys { state.keyed[id]?.add(commit, missedSome: missedSome) }
            for table in commit.tables { state.generations[table, default: 0] += 1 }
            if commit.mayHaveChangedAnything { state.epoch += 1 }
            if let now {
                for table in commit.tables { state.committedAt[table] = now }
                if commit.mayHaveChangedAnything { state.epochAt = now }
            }
            return state.signals.filter { id, entry in
                commit.mayHaveChanged(anyOf: entry.tables) || (missedSome && state.keyed[id] != nil)
            }.map(\.value.signal)
        }
        for signal in woken { signal.bump() }
    }

    private func ended() {
        let all = state.withLock { $0.signals.values.map(\.signal) }
        for signal in all { signal.end() }
    }

    /// Registers an observer of `query`; commits to its table wake `signal`.
    func register(_ signal: CommitSignal, for query: SelectQuery) {
        state.withLock { state in
            state.signals[ObjectIdentifier(signal)] = (Set(query.tables.map(\.name)), signal)
            state.observers[query, default: 0] += 1
        }
    }

    /// Registers an observer of `query` that reads again only the rows commits name by key
    /// (``changedRows(of:)``), when they name them.
    func registerKeyed(_ signal: CommitSignal, for query: SelectQuery) {
        state.withLock { state in
            state.keyed[ObjectIdentifier(signal)] = ChangedRows(table: query.table.name)
        }
        register(signal, for: query)
    }

    /// The rows that commits since the last call changed for the observer of `signal` (registered
    /// with ``registerKeyed(_:for:)``), and forgets them.
    func changedRows(of signal: CommitSignal) -> ChangedRows? {
        state.withLock { state in
            let id = ObjectIdentifier(signal)
            guard var changed = state.keyed[id] else { return nil }
            state.keyed[id] = ChangedRows(table: changed.table)
            changed.asOf = state.received
            return changed
        }
    }

    /// Whether a read that began after the commit numbered `sequence` was announced saw no other
    /// commit: none announced since, none under way. (The store must number its commits.)
    func noCommitSince(_ sequence: Int) -> Bool {
        guard let progress = (store as? any CommitProgressReporting)?.commitProgress else { return false }
        return progress.inFlight == 0 && progress.published == sequence
    }

    /// When the newest commit announced for `table` (or for any table) was received; `nil`
    /// when the store does not report observations.
    func lastCommit(to table: String) -> ContinuousClock.Instant? {
        guard reporting != nil else { return nil }
        return state.withLock { state in [state.committedAt[table], state.epochAt].compactMap { $0 }.max() }
    }

    /// Reports a read of changed rows, as a re-query: it took `duration`, and ended `sinceCommit`
    /// after the commit that woke it was announced.
    func reportKeyedRead(duration: Duration, sinceCommit: Duration?) {
        reporting?.observationRequeried(duration: duration, sinceCommit: sinceCommit)
    }

    /// Runs an observer's read of changed rows, taking its turn with the store's re-queries (so
    /// observers keep to one core, as for whole reads).
    func readByKey<T: Sendable>(_ read: () async throws -> T) async throws -> T {
        try await requeries.lock()
        defer { requeries.unlock() }
        return try await read()
    }

    /// Registers an observer of `tables` that re-reads on its own (an observation with includes).
    func register(_ signal: CommitSignal, tables: Set<String>) {
        state.withLock { $0.signals[ObjectIdentifier(signal)] = (tables, signal) }
    }

    /// Removes an observer registered by its tables.
    func unregister(_ signal: CommitSignal) {
        _ = state.withLock { $0.signals.removeValue(forKey: ObjectIdentifier(signal)) }
    }

    /// Removes an observer; the shared result of its query goes with the query's last observer.
    func unregister(_ signal: CommitSignal, for query: SelectQuery) {
        state.withLock { state in
            state.signals[ObjectIdentifier(signal)] = nil
            state.keyed[ObjectIdentifier(signal)] = nil
            let remaining = (state.observers[query] ?? 1) - 1
            if remaining <= 0 {
                state.observers[query] = nil
                state.shared[query] = nil
            } else {
                state.observers[query] = remaining
            }
        }
    }

    /// The rows of `query` as of the current commit generation of its table: observers asking
    /// at the same generation share one query. `again`: not the rows read at this generation
    /// already (they failed their reader, and a commit may not be announced yet).
    func rows(for query: SelectQuery, again: Bool = false) async throws -> [Row] {
        let store = store
        let task = state.withLock { state -> Task<[Row], any Error> in
            // Any table the query reads (subqueries too) moves its generation.
            let generation = query.tables.reduce(0) { $0 + state.generations[$1.name, default: 0] }
            let epoch = state.epoch
            if !again, let shared = state.shared[query], shared.generation == generation, shared.epoch == epoch {
                return shared.task
            }
            let requeries = requeries
            let reporting = reporting
            // A query run again after commits (not an observation's first result) measures how
            // long after the newest commit it reflects its result was ready.
            let since =
                reporting == nil || state.shared[query] == nil
                ? nil
                : (query.tables.compactMap { state.committedAt[$0.name] } + [state.epochAt].compactMap { $0 }).max()
            let task = Task { () throws -> [Row] in
                let started = reporting == nil ? nil : ContinuousClock.now
                try await requeries.lock()
                defer { requeries.unlock() }
                let rows = try await FreshReads.run { try await store.fetch(query) { $0 } }
                if let reporting, let started {
                    let ended = ContinuousClock.now
                    reporting.observationRequeried(duration: ended - started, sinceCommit: since.map { ended - $0 })
                }
                return rows
            }
            state.shared[query] = Shared(generation: generation, epoch: epoch, task: task)
            return task
        }
        do {
            return try await task.value
        } catch {
            // A failed read is not shared with whoever asks next: they read again.
            state.withLock { state in
                if state.shared[query]?.task == task { state.shared[query] = nil }
            }
            throw error
        }
    }
}

/// How many observers' results on `store` were patched with rows read by key instead of read
/// whole, while the store has observers (tests check that the cheaper path ran).
package func keyedObservationReads(on store: any Store) -> Int { ObservationHub.keyedReads(on: store) }

/// Counts commits to the observed table and wakes the consumer waiting for one.
package final class CommitSignal: Sendable {
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
    package func consume() { state.withLock { $0.consumed = $0.generation } }

    /// Waits for a commit not yet handled; returns false when cancelled or the store ended.
    package func wait() async -> Bool {
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
