import Synchronization

/// Fans committed-transaction notices out to every subscriber: what a store's
/// ``Store/commits()`` returns streams of.
///
/// ```swift
/// let broadcaster = CommitBroadcaster()
/// let commits = broadcaster.subscribe()          // what `commits()` returns
/// broadcaster.publish(StoreCommit(tables: ["airports"]))  // after each commit
/// ```
public final class CommitBroadcaster: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<StoreCommit>.Continuation]>([:])
    private let nextID = Mutex(0)
    private let idleHandler = Mutex<(@Sendable () -> Void)?>(nil)

    /// A broadcaster with no subscribers.
    public init() {}

    /// A new stream of notices; it ends its subscription when the consumer stops.
    public func subscribe() -> AsyncStream<StoreCommit> {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: StoreCommit.self, bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let idle = self.subscribers.withLock { subscribers in
                subscribers.removeValue(forKey: id) != nil && subscribers.isEmpty
            }
            if idle { self.idleHandler.withLock { $0 }?() }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// How many subscriptions are live.
    public var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// Calls `handler` each time the last subscription ends (a store stops listening to other
    /// processes then, and holds no connection for it). The handler may find a new subscriber
    /// already there: check ``subscriberCount`` under the lock that starts listening.
    public func whenIdle(_ handler: @escaping @Sendable () -> Void) {
        idleHandler.withLock { $0 = handler }
    }

    /// Announces a commit to every subscriber (nothing when it touched no table). A subscriber
    /// that falls behind keeps the newest 256 notices.
    public func publish(_ commit: StoreCommit) {
        guard !commit.tables.isEmpty || commit.mayHaveChangedAnything else { return }
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(commit) }
    }
}
