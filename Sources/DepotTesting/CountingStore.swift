import Depot
import Synchronization

/// A store wrapper that counts the queries run through it and the live commit subscriptions:
/// for tests that pin down "no wasted work" and "cancelling frees everything".
public final class CountingStore: Store {
    /// The store doing the work.
    public let base: any Store
    private let counters = Mutex((fetches: 0, counts: 0, subscriptions: 0))

    public init(_ base: any Store) {
        self.base = base
    }

    /// Queries (`fetch`) run so far.
    public var fetchCount: Int { counters.withLock { $0.fetches } }
    /// The counts run so far.
    public var countCount: Int { counters.withLock { $0.counts } }
    /// Commit subscriptions currently live.
    public var liveSubscriptions: Int { counters.withLock { $0.subscriptions } }

    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        counters.withLock { $0.fetches += 1 }
        return try await base.scan(query, read)
    }

    public func count(_ query: SelectQuery) async throws -> Int {
        counters.withLock { $0.counts += 1 }
        return try await base.count(query)
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await base.transaction(body)
    }

    public func commits() -> AsyncStream<StoreCommit> {
        counters.withLock { $0.subscriptions += 1 }
        let upstream = base.commits()
        let (stream, continuation) = AsyncStream.makeStream(of: StoreCommit.self)
        let task = Task {
            for await commit in upstream { continuation.yield(commit) }
            continuation.finish()
        }
        continuation.onTermination = { [self] _ in
            task.cancel()
            counters.withLock { $0.subscriptions -= 1 }
        }
        return stream
    }
}
