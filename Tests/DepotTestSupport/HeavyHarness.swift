import Depot

/// One heavy harness at a time in the test process: the kill loops, the server faults, the soaks,
/// the three-store differentials and the fuzzers each keep a core busy for many seconds (child
/// processes, servers, thousands of cases). Run side by side on CI's 2 cores they starved the
/// ordinary tests beside them past their generous outer bounds; one at a time, the ordinary tests
/// share the machine with one of them.
public enum HeavyHarness {
    private static let lock = AsyncLock()

    /// Runs `body` once no other heavy harness runs.
    ///
    /// - Parameter body: The harness.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or `CancellationError` when the test is cancelled while it
    ///   waits.
    public static func run<T>(_ body: () async throws -> T) async throws -> T {
        try await lock.withLock(body)
    }
}
