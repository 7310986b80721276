import Foundation

/// The PostgreSQL server tests use: `DEPOT_POSTGRES_URL`, as `.ci/postgres start` prints it.
///
/// Without it PostgreSQL tests skip, and say so on standard error; under `CI=true` a missing
/// server fails them instead (``isConfigured`` is then `true` and ``requireURL()`` throws).
///
/// ```swift
/// @Suite(.enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"))
/// struct MyPostgresTests { … try PostgresEnvironment.requireURL() … }
/// ```
public enum PostgresEnvironment {
    static let environment = ProcessInfo.processInfo.environment

    /// `DEPOT_POSTGRES_URL`, if set.
    public static let url = environment["DEPOT_POSTGRES_URL"]

    /// Whether `CI=true`.
    public static let isCI = environment["CI"] == "true"

    /// Whether PostgreSQL tests run: a server is configured, or CI requires one (and they then
    /// fail). Prints a loud skip notice once when they do not run.
    public static let isConfigured: Bool = {
        if url == nil && !isCI {
            let message =
                "SKIPPING PostgreSQL tests: DEPOT_POSTGRES_URL is not set. Start a throwaway server with "
                + "`eval \"$(.ci/postgres start)\"` (see README, Development)."
            FileHandle.standardError.write(Data(("\n" + message + "\n").utf8))
        }
        return url != nil || isCI
    }()

    /// The server URL, or an error saying that CI needs one.
    ///
    /// Unless the URL sets one, it gets a 60-second `connect_timeout`: a loaded 2-core CI machine
    /// opening dozens of pools at once has taken longer than the default 10 s to connect. (Tests
    /// of the timeout itself set their own.)
    public static func requireURL() throws -> String {
        guard let url else {
            throw PostgresEnvironmentError(
                message: "CI=true but DEPOT_POSTGRES_URL is not set: PostgreSQL tests cannot run")
        }
        if url.contains("connect_timeout=") { return url }
        return url + (url.contains("?") ? "&" : "?") + "connect_timeout=60"
    }

    /// The server URL pointing at a new schema of its own (see ``scratchSchemaName()``), for a
    /// test — or a child process it starts — that needs a URL rather than a store.
    public static func scratchURL() throws -> String {
        let base = try requireURL()
        return base + (base.contains("?") ? "&" : "?") + "schema=" + scratchSchemaName()
    }

    /// A PgBouncer in transaction mode in front of the server, for a database of its own
    /// (`.ci/postgres bouncer`), and the same database reached directly (for set-up).
    public static let bouncerURL = environment["DEPOT_PGBOUNCER_URL"]
    /// The PgBouncer's database reached directly.
    public static let bouncerDirectURL = environment["DEPOT_PGBOUNCER_DIRECT_URL"]

    /// Whether the PgBouncer tests run: one is configured, or CI requires one (they then fail).
    public static let isBouncerConfigured: Bool = {
        if bouncerURL == nil && !isCI {
            FileHandle.standardError.write(
                Data(
                    ("\nSKIPPING PgBouncer tests: DEPOT_PGBOUNCER_URL is not set. Start one with "
                        + "`eval \"$(.ci/postgres bouncer DIR)\"` after `.ci/postgres start DIR`.\n").utf8))
        }
        return bouncerURL != nil || isCI
    }()

    /// The PgBouncer URL and the direct one, or an error saying that CI needs them; each with a
    /// 60-second `connect_timeout`, as ``requireURL()`` gives (a loaded CI run has taken longer
    /// than the default 10 s to connect through the pooler too).
    public static func requireBouncer() throws -> (pooled: String, direct: String) {
        guard let bouncerURL, let bouncerDirectURL else {
            throw PostgresEnvironmentError(
                message:
                    "DEPOT_PGBOUNCER_URL and DEPOT_PGBOUNCER_DIRECT_URL are not set; CI runs `.ci/postgres bouncer`")
        }
        func patient(_ url: String) -> String {
            url.contains("connect_timeout=") ? url : url + (url.contains("?") ? "&" : "?") + "connect_timeout=60"
        }
        return (patient(bouncerURL), patient(bouncerDirectURL))
    }

    /// The role `.ci/postgres start` creates that may log in and nothing more: tests grant it what
    /// they want a read-only client to have.
    public static let readerRole = "depot_reader"

    /// `DEPOT_POSTGRES_READER_URL` (the URL of ``readerRole``, as `.ci/postgres start` prints it),
    /// or an error saying how to get it.
    public static func requireReaderURL() throws -> String {
        guard let url = environment["DEPOT_POSTGRES_READER_URL"] else {
            throw PostgresEnvironmentError(
                message: "DEPOT_POSTGRES_READER_URL is not set: start the server with `.ci/postgres start`, which "
                    + "creates the role \(readerRole) and prints its URL")
        }
        return url + (url.contains("?") ? "&" : "?") + "connect_timeout=60"
    }

    /// A new schema name for one test's tables (`test_<uuid>`).
    public static func scratchSchemaName() -> String {
        "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }
}

/// CI requires a PostgreSQL server and none is configured.
public struct PostgresEnvironmentError: Error, CustomStringConvertible {
    /// What is missing and why the tests cannot run.
    public var message: String
    /// The ``PostgresEnvironmentError/message``.
    public var description: String { message }
}
