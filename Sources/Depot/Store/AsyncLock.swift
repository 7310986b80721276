import Synchronization

/// A first-come, first-served lock for async code: what serializes a store's transactions.
package final class AsyncLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    package init() {}

    /// Waits until the lock is free, then holds it.
    package func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.isLocked {
                    state.waiters.append(continuation)
                    return false
                }
                state.isLocked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Frees the lock, handing it to the next waiter if any.
    package func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.isLocked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// Fans committed-transaction notices out to every subscriber.
package final class CommitBroadcaster: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<StoreCommit>.Continuation]>([:])
    private let nextID = Mutex(0)

    package init() {}

    /// A new stream of notices; it ends its subscription when the consumer stops.
    package func subscribe() -> AsyncStream<StoreCommit> {
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
    package var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// Announces a commit to every subscriber.
    package func publish(_ commit: StoreCommit) {
        guard !commit.tables.isEmpty else { return }
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(commit) }
    }
}
