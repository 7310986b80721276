import Dispatch
import Synchronization

/// Races an operation against a deadline with structured cancellation.
///
/// Transports' own timeouts differ (URLSession's sub-second timeouts fire after a few
/// milliseconds on Linux; AsyncHTTPClient's bound only the response head), so the client
/// runs the exchange in a child task and cancels it when a sibling's timer fires first.
enum Deadline {
    /// The deadline passed before the operation finished.
    struct Exceeded: Error {}

    private enum Outcome<Value: Sendable>: Sendable {
        case finished(Value)
        case deadlinePassed
    }

    static func race<Value: Sendable>(
        until deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Outcome<Value>.self) { group in
            group.addTask { .finished(try await operation()) }
            group.addTask {
                try await sleep(until: deadline)
                return .deadlinePassed
            }
            defer { group.cancelAll() }
            switch try await group.next() {
            case .finished(let value): return value
            case .deadlinePassed, nil: throw Exceeded()
            }
        }
    }

    /// Sleeps until `deadline` on a dispatch timer, released as soon as the sleep is cancelled.
    ///
    /// `Task.sleep` would do, except that a cancelled `Task.sleep` keeps its timer (about 2 KB)
    /// until the time it was set for: at thousands of requests a second with a 30 s deadline,
    /// that is tens of thousands of dead timers and a hundred megabytes.
    static func sleep(until deadline: ContinuousClock.Instant) async throws {
        let timer = Timer()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                timer.start(after: deadline - .now, continuation)
            }
        } onCancel: {
            timer.cancel()
        }
    }

    /// One dispatch timer and the continuation it resumes, exactly once.
    private final class Timer: Sendable {
        private enum State {
            case idle
            case running(any DispatchSourceTimer, CheckedContinuation<Void, any Error>)
            case finished
        }

        // DispatchSourceTimer is thread-safe but not annotated Sendable; the Mutex guards it.
        private let state = Mutex(UnsafeTransfer(State.idle))

        private static let queue = DispatchQueue(label: "DepotHTTP.deadline", attributes: .concurrent)

        func start(after duration: Duration, _ continuation: CheckedContinuation<Void, any Error>) {
            let source = state.withLock { state -> (any DispatchSourceTimer)? in
                guard case .idle = state.value else { return nil }  // cancelled before it started
                let source = DispatchSource.makeTimerSource(queue: Self.queue)
                state.value = .running(source, continuation)
                return source
            }
            guard let source else {
                continuation.resume(throwing: CancellationError())
                return
            }
            // A concurrent cancel may already have cancelled the source: configuring and
            // resuming a cancelled source is allowed (releasing a never-resumed one is not).
            let components = duration.components
            let nanoseconds = max(0, components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
            source.schedule(deadline: .now() + .nanoseconds(Int(nanoseconds)), leeway: .milliseconds(1))
            source.setEventHandler { [weak self] in self?.finish(cancelled: false) }
            source.resume()
        }

        func cancel() { finish(cancelled: true) }

        private func finish(cancelled: Bool) {
            let running = state.withLock { state -> (any DispatchSourceTimer, CheckedContinuation<Void, any Error>)? in
                defer { state.value = .finished }
                if case .running(let source, let continuation) = state.value { return (source, continuation) }
                return nil
            }
            guard let (source, continuation) = running else { return }
            source.cancel()
            if cancelled {
                continuation.resume(throwing: CancellationError())
            } else {
                continuation.resume()
            }
        }
    }
}

/// Moves a non-`Sendable` value into a `Mutex`, which serializes all access to it.
private struct UnsafeTransfer<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
