/// Reads that must see the latest commit, whoever made it: an observer reading again after a
/// commit it heard of, a schema check. A store that reads from replicas (PostgreSQL's
/// `replicaURLs`) serves them from its primary.
package enum FreshReads {
    /// Whether the current task's reads must see the latest commit.
    @TaskLocal package static var required = false

    /// Runs `body` with its reads served by the primary.
    package static func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await $required.withValue(true) { try await body() }
    }
}
