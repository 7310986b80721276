import Synchronization

/// A one-time event a test orders its steps by: ``wait()`` returns once ``fire()`` has been
/// called, at once if it already had. Waiting takes no thread and no clock, so a step follows the
/// one it waits for however slow the machine is; it ignores cancellation, so that it can stand
/// for work that does (a token provider that hangs until the test releases it).
final class Signal: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Whether ``fire()`` was called.
    var hasFired: Bool { state.withLock { $0.fired } }

    /// Fires the signal: every waiter resumes, and later ones do not wait. Idempotent.
    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal has fired, cancelled or not.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { state -> Bool in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
