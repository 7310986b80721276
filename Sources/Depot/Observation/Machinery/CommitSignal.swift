import Synchronization

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
