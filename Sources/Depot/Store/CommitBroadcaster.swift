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
    private let events = Broadcaster<StoreCommit>(buffering: 256)
    private let progress = Mutex(CommitProgress())

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
        progress.withLock { progress in
            // Numbered and handed out under one lock: subscribers receive them in number order.
            progress.published += 1
            var numbered = commit
            numbered.sequence = progress.published
            events.publish(numbered)
        }
    }

    /// Marks a commit as under way until the ticket is released (after its announcement, or
    /// when it failed): readers that must know whether they saw an unannounced commit ask
    /// ``progress``. Take it before the commit becomes visible to readers.
    package func commitStarting() -> CommitTicket {
        progress.withLock { $0.inFlight += 1 }
        return CommitTicket(broadcaster: self)
    }

    fileprivate func commitEnded() {
        progress.withLock { $0.inFlight -= 1 }
    }

    /// How many commits were announced, and how many are under way (see ``commitStarting()``).
    package var current: CommitProgress { progress.withLock { $0 } }
}

/// Where a store's announcements stand: how many were published, and how many commits are under
/// way (possibly visible to readers, not yet announced).
package struct CommitProgress: Sendable, Equatable {
    package var published = 0
    package var inFlight = 0
}

/// A commit under way (``CommitBroadcaster/commitStarting()``); it ends when released.
package final class CommitTicket: Sendable {
    private let broadcaster: CommitBroadcaster

    fileprivate init(broadcaster: CommitBroadcaster) { self.broadcaster = broadcaster }

    deinit { broadcaster.commitEnded() }
}

/// A store that numbers its announcements and says which commits are under way: an observer
/// can tell that a read saw nothing unannounced, and trust ``StoreCommit/changedKeys``.
package protocol CommitProgressReporting: Store {
    /// The store's announcements so far, and its commits under way; `nil` when its
    /// announcements are not numbered (a wrapper over a store that does not number them).
    var commitProgress: CommitProgress? { get }
}
