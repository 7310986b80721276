/// The task behind an `@Observable` live object (``LiveQuery``, a resource's or a sync engine's
/// live object): it starts when the object is first read, not when it is made, so a view that
/// builds one in its initializer on every update (and keeps only the first in `@State`) starts
/// one observation, not one per update; it ends on ``stop()`` or when the object is released.
@MainActor
package final class LiveRunner {
    private var task: Task<Void, Never>?
    private var begin: (() -> Task<Void, Never>)?

    /// A runner that, once started, hands each element of `updates()` to `receive` (which answers
    /// `false` when its object is gone) and an error that ends them to `fail`.
    package init<Updates: AsyncSequence>(
        _ updates: @escaping @Sendable () -> Updates,
        receive: @escaping @MainActor (Updates.Element) -> Bool,
        fail: @escaping @MainActor (any Error) -> Void
    ) {
        begin = {
            Task { @MainActor in
                do {
                    for try await element in updates() {
                        // Stopped while the element was on its way: the object keeps what it had.
                        guard !Task.isCancelled, receive(element) else { return }
                    }
                } catch is CancellationError {
                    return
                } catch {
                    fail(error)
                }
            }
        }
    }

    /// Whether the observation has started.
    package var hasStarted: Bool { task != nil }

    /// Starts observing, unless it started or stopped already.
    package func startIfNeeded() {
        guard task == nil, let begin else { return }
        self.begin = nil
        task = begin()
    }

    /// Stops observing for good.
    package func stop() {
        begin = nil
        task?.cancel()
        task = nil
    }

    isolated deinit {
        task?.cancel()
    }
}
