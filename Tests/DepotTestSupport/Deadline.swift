import Synchronization

/// A bound on a piece of a test that must not hang the test run.
///
/// Swift Testing's `.timeLimit` cancels a test that runs too long, then waits for it to return: a
/// test stuck in something that ignores cancellation keeps the whole run going until CI's own limit
/// kills it, with the run's buffered output lost. ``run(_:limit:_:)`` gives up on `body` at
/// `limit` instead — it cancels `body`, does not wait for it, and throws ``Exceeded`` naming what
/// hung, so the run goes on and says where.
///
/// ```swift
/// try await Deadline.run("store.close()", limit: .seconds(120)) { await store.close() }
/// ```
public enum Deadline {
    /// A piece of a test ran past its bound; it was cancelled and left behind.
    public struct Exceeded: Error, CustomStringConvertible {
        /// What ran past its bound.
        public let what: String
        /// The bound.
        public let limit: Duration
        /// What the test prints.
        public var description: String {
            "\(what) did not finish within \(limit): cancelled and left behind so the test run goes on"
        }
    }

    /// Runs `body`, for at most `limit`: past it, `body` is cancelled and this throws
    /// ``Exceeded`` at once, without waiting for a `body` that ignores cancellation.
    ///
    /// - Parameters:
    ///   - what: What `body` does, for the error.
    ///   - limit: The bound: a hang detector, not a performance claim.
    ///   - body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, ``Exceeded``, or `CancellationError` when the caller is
    ///   cancelled (also without waiting for `body`).
    public static func run<T: Sendable>(
        _ what: String, limit: Duration, _ body: sending @escaping () async throws -> T
    ) async throws -> T {
        try await run(limit: limit, timedOut: Exceeded(what: what, limit: limit), body)
    }

    /// ``run(_:limit:_:)`` throwing `timedOut` past the bound.
    static func run<T: Sendable>(
        limit: Duration, timedOut: any Error, _ body: sending @escaping () async throws -> T
    ) async throws -> T {
        let outcome = Outcome<T>()
        let work = Task {
            do { outcome.settle(.success(try await body())) } catch { outcome.settle(.failure(error)) }
        }
        let timer = Task {
            try await Task.sleep(for: limit)
            outcome.settle(.failure(timedOut))
            work.cancel()
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.value
        } onCancel: {
            work.cancel()
            outcome.settle(.failure(CancellationError()))
        }
    }

    /// The first of the body's result, the timer and cancellation, to one waiter.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var result: Result<T, any Error>?
            var waiter: CheckedContinuation<T, any Error>?
        }
        private let state = Mutex(State())

        func settle(_ result: Result<T, any Error>) {
            let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(with: result)
        }

        var value: T {
            get async throws {
                try await withCheckedThrowingContinuation { continuation in
                    let settled: Result<T, any Error>? = state.withLock { state in
                        if state.result == nil { state.waiter = continuation }
                        return state.result
                    }
                    if let settled { continuation.resume(with: settled) }
                }
            }
        }
    }
}
