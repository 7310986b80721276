import Synchronization

/// Fires once; waiters resume then (at once if it has fired). Waiting ends with an error after
/// 5 minutes, so a test that never fires fails instead of hanging (60 s was once too short for a
/// PostgreSQL case on a loaded 2-core CI machine).
package final class Signal: Sendable {
    /// An unfired signal.
    package init() {}

    private let fired = Atomic<Bool>(false)

    /// Fires: every waiter resumes.
    package func fire() { fired.store(true, ordering: .sequentiallyConsistent) }

    /// Whether it has fired.
    package var hasFired: Bool { fired.load(ordering: .sequentiallyConsistent) }

    /// Returns once the signal has fired.
    ///
    /// - Throws: `CancellationError` after 5 minutes without a fire, or when the task is cancelled.
    package func wait() async throws {
        let end = ContinuousClock.now + .seconds(300)
        while !fired.load(ordering: .sequentiallyConsistent) {
            guard ContinuousClock.now < end else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
