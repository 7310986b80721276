import Depot
import Synchronization

/// At most ``width`` heavy harnesses at a time in the test process: the kill loops, the server
/// faults, the soaks, the three-store differentials and the fuzzers each keep a core busy for many
/// seconds (child processes, servers, thousands of cases). Run side by side on CI's 2 cores they
/// starved the ordinary tests beside them past their generous outer bounds; two at a time (one per
/// core, the kill loops mostly wait for their child processes), the ordinary tests share the
/// machine with them.
///
/// Waiting for the others is not the harness's own time: a CI run that queued the three-store
/// differential and the PostgreSQL fuzzer behind the kill loops failed both on their 10-minute
/// suite limits before they had run a step. So a harness's bound (`limit`) starts when it gets the
/// machine, and the suites that use it set an outer limit (``suiteLimitMinutes``) long enough for
/// the whole queue.
public enum HeavyHarness {
    /// How many heavy harnesses run at once.
    public static let width = 2
    private static let permits = AsyncPermits(width)

    /// The outer time limit, in minutes, of a suite whose tests run heavy harnesses: the queue of
    /// every harness before it plus its own ``run(limit:_:)`` bound. A hang still fails the run
    /// (on the harness's own bound, naming it), well inside CI's 90 minutes.
    public static let suiteLimitMinutes = 50

    /// A harness that ran past its own bound (counted from when it got the machine).
    public struct TimedOut: Error, CustomStringConvertible {
        /// The bound it ran past.
        public let limit: Duration
        /// What the test prints: the bound, and that it started after the queue.
        public var description: String {
            "the heavy harness ran past its own bound of \(limit) (counted from when it got the machine, after the queue)"
        }
    }

    /// Runs `body` once fewer than ``width`` heavy harnesses run, for at most `limit` from then: past it, `body`
    /// is cancelled and the harness fails with ``TimedOut`` at once, without waiting for a body
    /// that ignores cancellation (a hung harness fails its test instead of hanging the run; the
    /// machine goes to the next harness).
    ///
    /// - Parameters:
    ///   - limit: The harness's own bound, a hang detector, not a performance claim: generous, since
    ///     a harness shares the machine with the rest of the suite (the three-store differential
    ///     takes 3 minutes alone and ran past 10 in a full local run).
    ///   - body: The harness.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, ``TimedOut``, or `CancellationError` when the test is cancelled
    ///   while it waits.
    public static func run<T: Sendable>(
        limit: Duration = .seconds(1_500), _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await permits.acquire()
        defer { permits.release() }
        return try await Deadline.run(limit: limit, timedOut: TimedOut(limit: limit), body)
    }
}
