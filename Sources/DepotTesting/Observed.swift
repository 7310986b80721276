import Observation
import Synchronization

/// Returns once `condition` holds, evaluating it again each time an `@Observable` property it
/// read changes: how a test waits for a live object (`LiveQuery`, a view model) without a clock.
///
/// ```swift
/// let live = LiveQuery(airports, where: \.country == "NO")
/// try await observed { live.isLoaded }
/// #expect(live.results.count == 52)
/// ```
///
/// - Throws: `CancellationError` when the task is cancelled while waiting (a test's time limit).
@MainActor
public func observed(until condition: @escaping @MainActor () -> Bool) async throws {
    while !condition() {
        try Task.checkCancellation()
        let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.withLock { $0 = continuation }
                if Task.isCancelled { waiter.withLock { $0.take() }?.resume() }
                withObservationTracking {
                    _ = condition()
                } onChange: {
                    waiter.withLock { $0.take() }?.resume()
                }
            }
        } onCancel: {
            waiter.withLock { $0.take() }?.resume()
        }
    }
}
