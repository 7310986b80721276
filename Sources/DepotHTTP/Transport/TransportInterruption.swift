import Synchronization

/// Ends an exchange from outside the task that runs it: what the ``APIClient`` fires when a
/// call's deadline passes.
///
/// The client runs the middleware chain and the transport in the caller's own task (no task per
/// call, no thread hop on the way back) and cannot cancel that task at its deadline, so it hands
/// the transport an interruption instead. A transport whose library can stop a request by a
/// handle registers that for the length of the exchange; when the interruption fires the
/// exchange must end promptly, throwing (`CancellationError` is the convention):
///
/// ```swift
/// func send(
///     _ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption
/// ) async throws -> TransportResponse {
///     let task = library.start(request)
///     return try await interruption.whileRunning(onInterrupt: { task.cancel() }) {
///         try await task.response()
///     }
/// }
/// ```
///
/// Firing is final and idempotent; handlers run once, on the thread that fires (or at once, on
/// the registering thread, when the interruption had already fired). The ``APIClient`` fires
/// from one shared queue: a handler should only start the stopping, not wait for it.
public final class TransportInterruption: Sendable {
    private struct State {
        var isInterrupted = false
        var handlers: [(id: UInt64, handler: @Sendable () -> Void)] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// An interruption that has not fired.
    public init() {}

    /// Whether ``interrupt()`` was called.
    public var isInterrupted: Bool { state.withLock { $0.isInterrupted } }

    /// Fires the interruption: runs every registered handler, once.
    public func interrupt() {
        let handlers = state.withLock { state -> [(id: UInt64, handler: @Sendable () -> Void)] in
            guard !state.isInterrupted else { return [] }
            state.isInterrupted = true
            defer { state.handlers = [] }
            return state.handlers
        }
        for entry in handlers { entry.handler() }
    }

    /// Runs `operation` with `handler` registered: `handler` runs if the interruption fires
    /// while `operation` runs (at once if it already had). An interruption racing with the end
    /// of `operation` may still run `handler` just after this returns, so a handler must be
    /// harmless then (stopping a request that has finished is).
    ///
    /// - Parameters:
    ///   - handler: What stops the exchange, e.g. cancelling the library's request; it should
    ///     start the stopping and return, not wait for it.
    ///   - operation: The exchange.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws; the interruption itself throws nothing, so `operation`
    ///   must end by throwing once `handler` has stopped it.
    nonisolated(nonsending) public func whileRunning<Value>(
        onInterrupt handler: @escaping @Sendable () -> Void, _ operation: () async throws -> Value
    ) async throws -> Value {
        guard let id = register(handler) else {
            handler()
            return try await operation()
        }
        defer { unregister(id) }
        return try await operation()
    }

    /// Runs `operation`, calling `stop` when the calling task is cancelled or `interruption`
    /// (when there is one) fires: how both network transports tie a request handle to the call.
    nonisolated(nonsending) static func stopping<Value>(
        _ interruption: TransportInterruption?, with stop: @escaping @Sendable () -> Void,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        try await withTaskCancellationHandler {
            guard let interruption else { return try await operation() }
            return try await interruption.whileRunning(onInterrupt: stop, operation)
        } onCancel: {
            stop()
        }
    }

    /// Adds `handler`; `nil` when the interruption has fired already (the handler is not kept).
    private func register(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        state.withLock { state -> UInt64? in
            guard !state.isInterrupted else { return nil }
            let id = state.nextID
            state.nextID &+= 1
            state.handlers.append((id, handler))
            return id
        }
    }

    private func unregister(_ id: UInt64) {
        state.withLock { state in state.handlers.removeAll { $0.id == id } }
    }

    /// Runs `operation` in a task of its own and answers with its outcome, or with
    /// `CancellationError` as soon as the interruption fires or the calling task is cancelled
    /// (cancelling the task without waiting for it to wind down): for work that may not
    /// respond to cancellation, at the cost of one task and a thread hop.
    ///
    /// An interruption that fired before the race (or a caller cancelled before it) ends it at
    /// once, without starting `operation`: however fast `operation` would answer, it cannot win.
    package func race<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) async throws -> Value
    {
        try await race(operation, start: { Task(operation: $0) })
    }

    /// ``race(_:)`` with the operation's task made by `start`, so that a test can see whether the
    /// operation was started at all.
    func race<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Value,
        start: (_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never>
    ) async throws -> Value {
        let race = Race<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.await(continuation)
                // The interruption's handler goes in before the task starts: once it has fired, the
                // race ends here, and an operation that would answer at once is never started.
                guard let id = register({ race.finish(.failure(CancellationError())) }) else {
                    return race.finish(.failure(CancellationError()))
                }
                race.onEnd { self.unregister(id) }
                // Cancelled already (`onCancel` ran first): nothing to start.
                guard !race.isFinished else { return }
                let task = start {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                race.attach(task)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first outcome of a race (the operation's, the interruption's or the caller's
    /// cancellation) resumes the caller; the others are dropped. Whatever ends the race cancels
    /// the task and runs the clean-up.
    private final class Race<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value, any Error>?
            var outcome: Result<Value, any Error>?
            var task: Task<Void, Never>?
            var cleanUp: (@Sendable () -> Void)?
        }

        private let state = Mutex(State())

        /// Whether an outcome has ended the race.
        var isFinished: Bool { state.withLock { $0.outcome != nil } }

        func await(_ continuation: CheckedContinuation<Value, any Error>) {
            let early = state.withLock { state -> Result<Value, any Error>? in
                if let outcome = state.outcome { return outcome }  // cancelled before it started
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        func attach(_ task: Task<Void, Never>) {
            let finished = state.withLock { state -> Bool in
                state.task = task
                return state.outcome != nil
            }
            if finished { task.cancel() }
        }

        func onEnd(_ cleanUp: @escaping @Sendable () -> Void) {
            let finished = state.withLock { state -> Bool in
                state.cleanUp = cleanUp
                return state.outcome != nil
            }
            if finished { cleanUp() }
        }

        func finish(_ outcome: Result<Value, any Error>) {
            let (continuation, task, cleanUp) = state.withLock { state in
                guard state.outcome == nil else {
                    return (
                        CheckedContinuation<Value, any Error>?.none, Task<Void, Never>?.none,
                        (@Sendable () -> Void)?.none
                    )
                }
                state.outcome = outcome
                defer { state.continuation = nil }
                return (state.continuation, state.task, state.cleanUp)
            }
            task?.cancel()
            cleanUp?()
            continuation?.resume(with: outcome)
        }
    }
}
