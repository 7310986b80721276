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
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// How many subscriptions are live.
    public var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// Announces a commit to every subscriber (nothing when it touched no table). A subscriber
    /// that falls behind keeps the newest 256 notices.
    public func publish(_ commit: StoreCommit) {
        guard !commit.tables.isEmpty else { return }
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(commit) }
    }
}
