import Depot
import DepotTestSupport
import Foundation
import Testing

/// A PostgreSQL server of the test's own, made with `.ci/postgres`, for tests that stop or kill it
/// (doing that to the shared server would fail every other test running meanwhile).
struct ThrowawayCluster: Sendable {
    /// The cluster's folder (data, socket, log, port).
    let root: String
    /// `postgres://depot:depot@127.0.0.1:PORT/depot`.
    let url: String

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".ci/postgres").path

    /// Starts a cluster, hands it to `body`, and stops it (by its PID) and removes it afterwards,
    /// whatever happens.
    static func with(_ body: (ThrowawayCluster) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("depot-cluster-\(UUID().uuidString)")
            .path
        let exports = try await run("start", root)
        try await withCleanup { () async throws in
            let url = try #require(
                exports.split(separator: "\n").first { $0.hasPrefix("export DEPOT_POSTGRES_URL=") }
                    .map { String($0.dropFirst("export DEPOT_POSTGRES_URL=".count)) })
            try await body(ThrowawayCluster(root: root, url: url))
        } cleanup: {
            _ = try? await run("stop", root)
        }
    }

    /// Runs `.ci/postgres command root`, returning what it printed.
    @discardableResult
    static func run(_ command: String, _ root: String, _ argument: String = "") async throws -> String {
        let (status, printed) = try await shell("/bin/bash '\(script)' \(command) '\(root)' \(argument)")
        guard status == 0 else {
            throw DepotError(.connection, ".ci/postgres \(command) failed with status \(status): \(printed)")
        }
        return printed
    }

    /// Starts a hot standby of the server, streaming its log (`pg_basebackup -R`) and applying
    /// it `delay` late (`recovery_min_apply_delay`); returns its URL (same role and database).
    func startStandby(delay: Duration = .zero) async throws -> String {
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        let exports = try await Self.run("standby", root, "\(milliseconds)")
        return try #require(
            exports.split(separator: "\n").first { $0.hasPrefix("export DEPOT_STANDBY_URL=") }
                .map { String($0.dropFirst("export DEPOT_STANDBY_URL=".count)) })
    }

    /// Stops the standby (fast shutdown), keeping its data.
    func haltStandby() async throws { try await Self.run("halt", root + "/standby") }

    /// Starts the halted standby again on its port; it goes on streaming from the server.
    func resumeStandby() async throws { try await Self.run("resume", root + "/standby") }

    /// Stops the server the way an administrator does (fast shutdown: sessions are ended), keeping
    /// its data.
    func halt() async throws { try await Self.run("halt", root) }

    /// Starts a halted or killed server again on the same port (a killed one recovers from its
    /// write-ahead log first).
    func resume() async throws { try await Self.run("resume", root) }

    /// The postmaster's PID, from its lock file.
    func postmasterPID() throws -> pid_t {
        let text = try String(contentsOfFile: root + "/data/postmaster.pid", encoding: .utf8)
        return try #require(text.split(separator: "\n").first.flatMap { pid_t($0) })
    }

    /// The PIDs of the postmaster's children (background workers and sessions).
    func children(of postmaster: pid_t) async throws -> [pid_t] {
        try await Self.pids("pgrep -P \(postmaster)")
    }

    /// The PIDs a `pgrep` command line prints.
    static func pids(_ line: String) async throws -> [pid_t] {
        try await shell(line).output.split(separator: "\n").compactMap {
            pid_t($0.trimmingCharacters(in: .whitespaces))
        }
    }

    /// Kills the whole server with SIGKILL, the postmaster and every process it started, as the
    /// kernel's out-of-memory killer or a power cut would: nothing is shut down cleanly.
    func killServer() async throws {
        let postmaster = try postmasterPID()
        let processes = [postmaster] + (try await children(of: postmaster))
        for pid in processes { kill(pid, SIGKILL) }
        // Wait until they are gone, so that a restart finds no old process holding shared memory.
        for _ in 0..<300 where processes.contains(where: { kill($0, 0) == 0 }) {
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Kills the server's session processes whose title contains `state` (e.g. "in transaction")
    /// with SIGKILL: the postmaster then ends every session and restarts on its own (crash
    /// recovery). Returns how many it killed.
    func crashSessions(in state: String) async throws -> Int {
        let postmaster = try postmasterPID()
        let pids = try await Self.pids("pgrep -P \(postmaster) -f '\(state)'")
        for pid in pids { kill(pid, SIGKILL) }
        return pids.count
    }
}
