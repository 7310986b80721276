import Depot
@_exported import DepotSQL
@_spi(Benchmarks) import DepotSQL
import Foundation
import GRDB

/// Depot's embedded default: a SQLite database file, through GRDB.
///
/// The file is opened in WAL mode with a pool of connections: reads run concurrently with each
/// other and with a write; writes are serialized. Tables for the entities you use are created
/// on first use (`CREATE TABLE IF NOT EXISTS`) and checked against the schema when they exist.
///
/// ```swift
/// let store = try SQLiteStore(path: "airports.sqlite")
/// let airports = store.repository(Airport.self)
/// try await airports.upsert(list)
/// // SQL: INSERT INTO "airports" ("icao", …) VALUES (?, …) ON CONFLICT ("icao") DO UPDATE SET …
/// ```
///
/// Storage: `Decimal` as exact text (`DECIMAL_TEXT`, compared numerically through a collation),
/// `Date` as seconds since the reference date (`DATE_REAL`), rounded to the microsecond as on every
/// store (`Date.microseconds`), `UUID` as 16 bytes (`UUID_BLOB`), `URL` and JSON values as text,
/// `Bool` as 0/1. Another process may use the same file; busy waits up to `busyTimeout` instead of
/// failing.
///
/// `SQLiteStore` is `SQLStore` on ``SQLiteEngine``: reads, transactions, table checks and
/// migrations are the same code as `PostgresStore`'s.
public typealias SQLiteStore = SQLStore<SQLiteEngine>

extension SQLStore where Engine == SQLiteEngine {
    /// Opens (or creates) the database file at `path`.
    ///
    /// ```swift
    /// let store = try SQLiteStore(path: "airports.sqlite", busyTimeout: .seconds(30))
    /// ```
    ///
    /// - Parameters:
    ///   - path: The database file; created, with the SQLite database in it, if missing. Its folder
    ///     must exist.
    ///   - busyTimeout: How long a write waits for another process's write to finish.
    ///   - logging: Where and how much the store logs (`SQLLogging`); by default a logger
    ///     labelled `depot.sqlite`.
    ///   - metrics: Which metrics the store reports (`SQLMetrics`); by default through
    ///     swift-metrics' factory as bootstrapped now.
    ///   - tracing: Where the store reports spans (`SQLTracing`); by default the tracer
    ///     swift-distributed-tracing is bootstrapped with now.
    /// - Throws: `DepotError` of kind `.storage` when the file is not a SQLite database or
    ///   cannot be opened for writing; the message names the path.
    public convenience init(
        path: String, busyTimeout: Duration = .seconds(10), logging: SQLLogging = .standard(label: "depot.sqlite"),
        metrics: SQLMetrics = SQLMetrics(), tracing: SQLTracing = .bootstrapped
    ) throws {
        try self.init(
            path: path, busyTimeout: busyTimeout, logging: logging, metrics: metrics, tracing: tracing,
            instrumented: true)
    }

    /// ``init(path:busyTimeout:logging:metrics:tracing:)``; with `instrumented` false, a store that
    /// never calls its log, metrics or tracer: the baseline the benchmarks measure the default
    /// (no-op) instruments against.
    @_spi(Benchmarks) public convenience init(
        path: String, busyTimeout: Duration = .seconds(10), logging: SQLLogging = .standard(label: "depot.sqlite"),
        metrics: SQLMetrics = SQLMetrics(), tracing: SQLTracing = .bootstrapped, instrumented: Bool
    ) throws {
        self.init(
            engine: try SQLiteEngine(
                path: path, busyTimeout: busyTimeout, removesFolderOnDeinit: false, logging: logging,
                metrics: metrics, tracing: tracing),
            instrumented: instrumented)
    }

    /// A private database in a new temporary file, deleted when the store is released:
    /// for tests and scratch work, with the same semantics as a file store.
    ///
    /// ```swift
    /// let store = try SQLiteStore.temporary()
    /// ```
    ///
    /// - Parameters:
    ///   - logging: Where and how much the store logs (`SQLLogging`).
    ///   - metrics: Which metrics the store reports (`SQLMetrics`).
    ///   - tracing: Where the store reports spans (`SQLTracing`).
    /// - Throws: The file system's error when the temporary folder cannot be created, or
    ///   `DepotError` of kind `.storage` when the database cannot be opened.
    public static func temporary(
        logging: SQLLogging = .standard(label: "depot.sqlite"), metrics: SQLMetrics = SQLMetrics(),
        tracing: SQLTracing = .bootstrapped
    ) throws -> SQLiteStore {
        try temporary(logging: logging, metrics: metrics, tracing: tracing, preparing: nil)
    }

    /// ``temporary(logging:metrics:tracing:)`` whose every connection, writer and readers, runs
    /// `prepare` as it opens, after Depot's functions are registered (tests add functions of
    /// their own).
    package static func temporary(
        logging: SQLLogging = .standard(label: "depot.sqlite"), metrics: SQLMetrics = SQLMetrics(),
        tracing: SQLTracing = .bootstrapped, preparing prepare: (@Sendable (Database) throws -> Void)?
    ) throws -> SQLiteStore {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("depot-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return SQLiteStore(
            engine: try SQLiteEngine(
                path: directory.appendingPathComponent("store.sqlite").path, busyTimeout: .seconds(10),
                removesFolderOnDeinit: true, logging: logging, metrics: metrics, tracing: tracing,
                preparing: prepare))
    }

    /// The database file.
    public var path: String { engine.path }

    /// How often `PRAGMA data_version` is read while observers listen.
    public static var externalChangePollInterval: Duration { SQLiteEngine.externalChangePollInterval }
}
