import Synchronization

/// A first-come, first-served lock for async code: what serializes a store's transactions.
///
/// ```swift
/// let lock = AsyncLock()
/// await lock.lock()
/// defer { lock.unlock() }
/// // one task at a time here
/// ```
public final class AsyncLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// An unlocked lock.
    public init() {}

    /// Waits until the lock is free, then holds it.
    public func lock() async {
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
    public func unlock() {
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
