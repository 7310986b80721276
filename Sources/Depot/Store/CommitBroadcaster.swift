/// Fans committed-transaction notices out to every subscriber: what a store's
/// ``Store/commits()`` returns streams of.
///
/// ```swift
/// let broadcaster = CommitBroadcaster()
/// let commits = broadcaster.subscribe()          // what `commits()` returns
/// broadcaster.publish(StoreCommit(tables: ["airports"]))  // after each commit
/// ```
public final class CommitBroadcaster: Sendable {
    private let events = Broadcaster<StoreCommit>(buffering: 256)

    /// A broadcaster with no subscribers.
    public init() {}

    /// A new stream of notices; it ends its subscription when the consumer stops.
    public func subscribe() -> AsyncStream<StoreCommit> { events.subscribe() }

    /// How many subscriptions are live.
    public var subscriberCount: Int { events.subscriberCount }

    /// Calls `handler` each time the last subscription ends (a store stops listening to other
    /// processes then, and holds no connection for it). The handler may find a new subscriber
    /// already there: check ``subscriberCount`` under the lock that starts listening.
    public func whenIdle(_ handler: @escaping @Sendable () -> Void) { events.whenIdle(handler) }

    /// Announces a commit to every subscriber (nothing when it touched no table). A subscriber
    /// that falls behind keeps the newest 256 notices.
    public func publish(_ commit: StoreCommit) {
        guard !commit.tables.isEmpty || commit.mayHaveChangedAnything else { return }
        events.publish(commit)
    }
}
