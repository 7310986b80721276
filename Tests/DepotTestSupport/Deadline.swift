import DepotHTTP

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
        _ what: String, limit: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await run(limit: limit, timedOut: Exceeded(what: what, limit: limit), body)
    }

    /// ``run(_:limit:_:)`` throwing `timedOut` past the bound: DepotHTTP's race (the work in a
    /// task of its own, answered without waiting for it once interrupted), interrupted by a timer.
    static func run<T: Sendable>(
        limit: Duration, timedOut: any Error, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let interruption = TransportInterruption()
        let timer = Task {
            try await Task.sleep(for: limit)
            interruption.interrupt()
        }
        defer { timer.cancel() }
        do {
            return try await interruption.race(body)
        } catch is CancellationError where interruption.isInterrupted {
            throw timedOut
        }
    }
}
