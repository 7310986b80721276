import Depot
import Synchronization

/// A store that forwards to another and fails, holds or hides what a test tells it to: an app's
/// error paths, tested against a real store without breaking it.
///
/// ```swift
/// let store = FaultInjectingStore(try SQLiteStore.temporary())
/// store.failWrite(2)  // the second write from now throws; its transaction writes nothing
/// store.dropAnnouncements(1)  // the next commit reaches no observer (a lost notification)
/// let gate = store.holdTransactions()  // transactions wait at their start…
/// async let saving: Void = notes.upsert(note)
/// await gate.arrivals(1)  // …a test sees one waiting (a slow database), then
/// gate.open()  // lets it and every later one through
/// ```
///
/// A write is one batch written, one `update(where:set:)` or one removal, whatever the store
/// runs for it. Reads pass untouched. Features a store offers beyond `Store` (hand-written SQL,
/// migrations) are reached through the base store.
public final class FaultInjectingStore: Store {
    /// The store that does the work.
    public let base: any Store
    private let state = Mutex(State())
    private let announcements = Broadcaster<StoreCommit>(buffering: 64)

    struct State {
        var writes = 0
        var failures: [Int: any Error & Sendable] = [:]
        var dropped = 0
        var forwarding: Task<Void, Never>?
        var gate: TransactionGate?
    }

    /// The error an injected failure throws unless the test gives its own: `.storage`, naming
    /// the write.
    public static func injectedFailure(_ number: Int) -> DepotError {
        DepotError(.storage, "write \(number) failed: a fault injected by FaultInjectingStore")
    }

    /// A store forwarding to `base`, with no faults yet.
    public init(_ base: any Store) {
        self.base = base
    }

    deinit {
        state.withLock { $0.forwarding?.cancel() }
    }

    /// How many writes went through this store so far (failed ones included).
    public var writes: Int { state.withLock { $0.writes } }

    /// Makes the `n`th write from now (1: the next one) throw `error` (by default
    /// ``injectedFailure(_:)``) instead of writing; the transaction it is part of fails as it
    /// would on any error.
    public func failWrite(_ n: Int = 1, with error: (any Error & Sendable)? = nil) {
        state.withLock { state in
            let number = state.writes + max(1, n)
            state.failures[number] = error ?? Self.injectedFailure(number)
        }
    }

    /// Hides the next `count` commits from every observer of this store, as a lost notification
    /// would; the data is written as usual.
    public func dropAnnouncements(_ count: Int = 1) {
        state.withLock { $0.dropped += max(0, count) }
    }

    /// Makes every transaction from now wait at its start until the returned gate opens.
    public func holdTransactions() -> TransactionGate {
        let gate = TransactionGate()
        state.withLock { $0.gate = gate }
        return gate
    }

    /// Counts a write, throwing the failure injected for it.
    func countWrite() throws {
        let failure = state.withLock { state -> (any Error)? in
            state.writes += 1
            return state.failures.removeValue(forKey: state.writes)
        }
        if let failure { throw failure }
    }

    /// Reads from the base store.
    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    /// Counts in the base store.
    public func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    /// Aggregates in the base store.
    public func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try await base.aggregate(query)
    }

    /// A transaction of the base store (after the gate, when transactions are held), whose
    /// writes count and fail as told.
    public func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        if let gate = state.withLock({ $0.gate }) { await gate.pass() }
        return try await base.transaction { writer in try await body(FaultInjectingWriter(base: writer, store: self)) }
    }

    /// The base store's commits, less the dropped ones.
    public func commits() -> AsyncStream<StoreCommit> {
        state.withLock { state in
            guard state.forwarding == nil else { return }
            let upstream = base.commits()
            state.forwarding = Task { [weak self] in
                for await commit in upstream {
                    guard let self else { return }
                    let dropped = self.state.withLock { state in
                        guard state.dropped > 0 else { return false }
                        state.dropped -= 1
                        return true
                    }
                    if !dropped { self.announcements.publish(commit) }
                }
            }
        }
        return announcements.subscribe()
    }
}

/// Where the transactions of a ``FaultInjectingStore`` wait (see
/// ``FaultInjectingStore/holdTransactions()``).
public final class TransactionGate: Sendable {
    private struct State {
        var isOpen = false
        var arrived = 0
        var held: [CheckedContinuation<Void, Never>] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    /// Lets the waiting transactions and every later one through.
    public func open() {
        let (held, watchers) = state.withLock { state in
            state.isOpen = true
            defer {
                state.held = []
                state.watchers = []
            }
            return (state.held, state.watchers)
        }
        held.forEach { $0.resume() }
        watchers.forEach { $0.continuation.resume() }
    }

    /// Returns once `count` transactions have reached the gate (waiting, or let through).
    public func arrivals(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                guard state.arrived < count, !state.isOpen else { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Waits here until the gate opens.
    func pass() async {
        await withCheckedContinuation { continuation in
            let (through, ready) = state.withLock { state in
                state.arrived += 1
                let ready = state.watchers.filter { $0.count <= state.arrived }
                state.watchers.removeAll { $0.count <= state.arrived }
                if state.isOpen { return (true, ready) }
                state.held.append(continuation)
                return (false, ready)
            }
            ready.forEach { $0.continuation.resume() }
            if through { continuation.resume() }
        }
    }
}

/// The writer of a ``FaultInjectingStore`` transaction: counts writes and fails the ones the
/// store was told to.
struct FaultInjectingWriter: StoreWriter {
    let base: any StoreWriter
    let store: FaultInjectingStore

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] { try await base.aggregate(query) }

    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        try store.countWrite()
        return try await base.write(rows, into: table, mode: mode)
    }

    func update(_ query: UpdateQuery) async throws -> Int {
        try store.countWrite()
        return try await base.update(query)
    }

    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try store.countWrite()
        return try await base.delete(from: table, where: predicate)
    }

    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await base.savepoint { writer in try await body(FaultInjectingWriter(base: writer, store: store)) }
    }
}
