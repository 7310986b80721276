import Synchronization

/// `count` permits shared by tasks; waiters take a released one in the order they came, and stop
/// waiting when cancelled. ``AsyncLock`` is one permit; the tests' heavy harnesses share two.
///
/// ```swift
/// let permits = AsyncPermits(2)
/// try await permits.acquire()
/// defer { permits.release() }
/// ```
package final class AsyncPermits: Sendable {
    /// Free permits now.
    package var available: Int { state.withLock { $0.available } }

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }
    private let state: Mutex<State>

    /// `count` permits, all free.
    package init(_ count: Int) { state = Mutex(State(available: count)) }

    /// Takes a permit, waiting for one.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits (it then holds none).
    package func acquire() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    guard state.available > 0 else {
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return nil
                    }
                    state.available -= 1
                    return true
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Gives a permit back: the longest waiter takes it.
    package func release() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiters.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
