import Depot
import Synchronization

/// A store wrapper that counts the queries run through it and the live commit subscriptions:
/// for tests that pin down "no wasted work" and "cancelling frees everything".
///
/// Wrap the store under test, work through the wrapper, and compare the counts before and after:
///
/// ```swift
/// let counting = CountingStore(InMemoryStore())
/// let airports = counting.repository(TestAirport.self)
/// let before = counting.fetchCount
/// _ = try await airports.fetch(where: \.country == "NO")
/// #expect(counting.fetchCount == before + 1)
/// #expect(counting.liveSubscriptions == 0)
/// ```
///
/// The observation cases of ``StoreConformance`` use it to check that one commit costs observers
/// one query, and that ending an observation ends its subscription.
public final class CountingStore: Store {
    /// The store doing the work.
    public let base: any Store
    private let counters = Mutex((fetches: 0, counts: 0, subscriptions: 0))

    /// Wraps `base`, with every count at zero.
    ///
    /// - Parameter base: The store that runs the queries and transactions.
    public init(_ base: any Store) {
        self.base = base
    }

    /// Queries (`fetch`) run so far.
    public var fetchCount: Int { counters.withLock { $0.fetches } }
    /// The counts run so far.
    public var countCount: Int { counters.withLock { $0.counts } }
    /// Commit subscriptions currently live.
    public var liveSubscriptions: Int { counters.withLock { $0.subscriptions } }

    /// Runs `query` on ``CountingStore/base``, adding one to ``CountingStore/fetchCount``.
    ///
    /// - Parameters:
    ///   - query: The query to run.
    ///   - read: Reads the matching rows from the cursor, as for any store.
    /// - Returns: What `read` returned.
    /// - Throws: The base store's error, or what `read` throws.
    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        counters.withLock { $0.fetches += 1 }
        return try await base.scan(query, read)
    }

    /// Counts the rows matching `query` on ``CountingStore/base``, adding one to
    /// ``CountingStore/countCount``.
    ///
    /// - Parameter query: The query whose rows to count.
    /// - Returns: The base store's count.
    /// - Throws: The base store's error.
    public func count(_ query: SelectQuery) async throws -> Int {
        counters.withLock { $0.counts += 1 }
        return try await base.count(query)
    }

    /// Computes `query` on ``CountingStore/base``, adding one to ``CountingStore/countCount``.
    ///
    /// - Parameter query: The grouped query to compute.
    /// - Returns: The base store's rows.
    /// - Throws: The base store's error.
    public func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        counters.withLock { $0.counts += 1 }
        return try await base.aggregate(query)
    }

    /// Runs `body` in a transaction of ``CountingStore/base``; reads inside it are not counted.
    ///
    /// - Parameter body: The transaction's work, given the base store's writer.
    /// - Returns: What `body` returned, once the transaction committed.
    /// - Throws: What `body` throws (the transaction then rolls back), or the base store's error.
    public func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await base.transaction(body)
    }

    /// The base store's commit announcements, counted in ``CountingStore/liveSubscriptions`` until
    /// the stream terminates: its consumer's task is cancelled or drops it, or the base stream ends.
    ///
    /// - Returns: A stream forwarding every commit of ``CountingStore/base`` from now on.
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
