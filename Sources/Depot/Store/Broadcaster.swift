import Synchronization

/// Fans events out to every subscriber's `AsyncStream`: what ``CommitBroadcaster``, a sync
/// engine's status and a resource loader's refresh states are built on.
///
/// ```swift
/// let states = Broadcaster<Int>(buffering: 1, replaysLatest: true)
/// let counts = states.subscribe()    // the latest event at once (when there is one), then each new one
/// states.publish(3)
/// ```
///
/// Events reach every subscriber in the order they were published; a subscriber that falls
/// behind keeps the newest `buffering` of them. A subscription ends when its consumer stops.
package final class Broadcaster<Event: Sendable>: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextID = 0
        var latest: Event?
        var idle: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let buffering: Int
    private let replaysLatest: Bool

    /// A broadcaster keeping `buffering` events for a subscriber that falls behind; with
    /// `replaysLatest`, a new subscriber gets the latest event first.
    package init(buffering: Int, replaysLatest: Bool = false) {
        self.buffering = buffering
        self.replaysLatest = replaysLatest
    }

    /// A new stream of events; its subscription ends when the consumer stops.
    package func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Event.self, bufferingPolicy: .bufferingNewest(buffering))
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            if replaysLatest, let latest = state.latest { continuation.yield(latest) }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let idle = self.state.withLock { state in
                state.subscribers.removeValue(forKey: id) != nil && state.subscribers.isEmpty ? state.idle : nil
            }
            idle?()
        }
        return stream
    }

    /// Hands `event` to every subscriber (and keeps it as the latest).
    package func publish(_ event: Event) {
        state.withLock { state in
            if replaysLatest { state.latest = event }
            // Under the lock: concurrent publishers reach every subscriber in one order.
            for continuation in state.subscribers.values { continuation.yield(event) }
        }
    }

    /// The event published last (kept only with `replaysLatest`).
    package var latest: Event? { state.withLock { $0.latest } }

    /// How many subscriptions are live.
    package var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Calls `handler` each time the last subscription ends.
    package func whenIdle(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.idle = handler }
    }
}
