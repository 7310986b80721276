import CoreMetrics
import Depot
import Metrics
import Synchronization

/// The counters and timers a SQL store reports through swift-metrics.
///
/// | Metric | Kind | Dimensions | What it counts |
/// | --- | --- | --- | --- |
/// | `depot_statements_total` | counter | `system`, `operation` | statements run: `select`, `count`, `write`, `delete`, `execute` (DDL, `BEGIN`, savepoints, …), `script`, `commit`, `catalog` |
/// | `depot_statement_duration_seconds` | timer | `system`, `operation` | how long each took |
/// | `depot_rows_read_total` | counter | `system` | rows `select`s handed to Depot |
/// | `depot_rows_written_total` | counter | `system` | rows `write`s and `delete`s changed |
/// | `depot_errors_total` | counter | `system`, `kind` | statements that failed, by `DepotError` kind |
/// | `depot_transactions_total` | counter | `system`, `outcome` | transactions that ended: `commit` or `rollback` |
/// | `depot_transaction_duration_seconds` | timer | `system` | from `BEGIN` to `COMMIT` or `ROLLBACK` |
/// | `depot_write_lock_wait_seconds` | timer | `system` | how long a transaction waited for the store's turn |
/// | `depot_pool_connections_in_use` | gauge | `system` | PostgreSQL: pooled connections lent out |
/// | `depot_pool_wait_seconds` | timer | `system` | PostgreSQL: how long a call waited for a connection |
/// | `depot_replica_serving` | gauge | `system`, `replica` | PostgreSQL with `replicaURLs`: 1 while the replica serves reads, 0 while skipped |
/// | `depot_replica_lag_seconds` | gauge | `system`, `replica` | how far behind the primary the replica's last check found it |
/// | `depot_replica_reads_total` | counter | `system`, `replica` | reads the replica served |
/// | `depot_primary_reads_total` | counter | `system`, `reason` | reads that went to the primary although replicas are configured: `no_replica`, `behind_own_write`, `fresh_read`, `replica_failed` |
/// | `depot_observation_requeries_total` | counter | `system` | queries observers share, run again after a commit (or for a first result) |
/// | `depot_observation_requery_duration_seconds` | timer | `system` | how long each took, its wait for the store's one re-query at a time included |
/// | `depot_observation_latency_seconds` | timer | `system` | from the store announcing a commit to the new result of an observed query it touched |
///
/// `system` is `sqlite` or `postgresql`; ``dimensions`` come on top (say, which database). The
/// metrics are made when the store is made, through the factory swift-metrics is bootstrapped
/// with then: bootstrap first. With swift-metrics' default no-op factory the store skips the
/// work altogether (the benchmark's "metrics off" case measures it).
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())       // your backend, once, at start
/// let store = try SQLiteStore(path: "app.sqlite", metrics: SQLMetrics(dimensions: [("db", "app")]))
/// ```
public struct SQLMetrics: Sendable {
    /// Makes the metrics; swift-metrics' bootstrapped factory by default.
    public var factory: any MetricsFactory
    /// Dimensions every metric of the store carries, besides its own.
    public var dimensions: [(String, String)]

    /// Metrics through `factory`, each with `dimensions`.
    ///
    /// - Parameters:
    ///   - factory: Makes the metrics (default: `MetricsSystem.factory`, as bootstrapped now).
    ///   - dimensions: Added to every metric, e.g. `[("db", "orders")]`.
    public init(factory: any MetricsFactory = MetricsSystem.factory, dimensions: [(String, String)] = []) {
        self.factory = factory
        self.dimensions = dimensions
    }

    /// Whether anything is reported: false with swift-metrics' no-op factory.
    public var isEnabled: Bool { !(factory is NOOPMetricsHandler) }

    /// What a statement did, as the `operation` dimension names it.
    package enum Operation: String, CaseIterable, Sendable {
        case select, count, write, delete, execute, script, commit, catalog
    }
}

/// A store's metrics, made once: what ``SQLStore`` and its connections report to.
package final class SQLMeters: Sendable {
    package let isEnabled: Bool
    private let statements: [SQLMetrics.Operation: (count: Counter, duration: Timer)]
    private let rowsRead: Counter
    private let rowsWritten: Counter
    private let commits: Counter
    private let rollbacks: Counter
    private let transactionDuration: Timer
    private let lockWait: Timer
    private let requeries: Counter
    private let requeryDuration: Timer
    private let observationLatency: Timer
    private let errors: Mutex<[String: Counter]>
    private let settings: SQLMetrics
    private let system: (String, String)

    package init(_ settings: SQLMetrics, dialect: any SQLDialect) {
        self.settings = settings
        isEnabled = settings.isEnabled
        system = ("system", dialect.telemetrySystem)
        let base = [system] + settings.dimensions
        let factory = settings.factory
        var statements: [SQLMetrics.Operation: (count: Counter, duration: Timer)] = [:]
        for operation in SQLMetrics.Operation.allCases {
            let dimensions = base + [("operation", operation.rawValue)]
            statements[operation] = (
                Counter(label: "depot_statements_total", dimensions: dimensions, factory: factory),
                Timer(label: "depot_statement_duration_seconds", dimensions: dimensions, factory: factory)
            )
        }
        self.statements = statements
        rowsRead = Counter(label: "depot_rows_read_total", dimensions: base, factory: factory)
        rowsWritten = Counter(label: "depot_rows_written_total", dimensions: base, factory: factory)
        commits = Counter(
            label: "depot_transactions_total", dimensions: base + [("outcome", "commit")], factory: factory)
        rollbacks = Counter(
            label: "depot_transactions_total", dimensions: base + [("outcome", "rollback")], factory: factory)
        transactionDuration = Timer(label: "depot_transaction_duration_seconds", dimensions: base, factory: factory)
        lockWait = Timer(label: "depot_write_lock_wait_seconds", dimensions: base, factory: factory)
        requeries = Counter(label: "depot_observation_requeries_total", dimensions: base, factory: factory)
        requeryDuration = Timer(
            label: "depot_observation_requery_duration_seconds", dimensions: base, factory: factory)
        observationLatency = Timer(label: "depot_observation_latency_seconds", dimensions: base, factory: factory)
        errors = Mutex([:])
    }

    /// A statement finished: counted, timed, its rows added.
    package func statement(_ operation: SQLMetrics.Operation, elapsed: Duration, rows: Int?) {
        guard isEnabled, let meters = statements[operation] else { return }
        meters.count.increment()
        meters.duration.record(duration: elapsed)
        guard let rows, rows > 0 else { return }
        switch operation {
        case .select: rowsRead.increment(by: rows)
        case .write, .delete: rowsWritten.increment(by: rows)
        default: break
        }
    }

    /// A statement failed: counted, and its error by kind.
    package func failed(_ operation: SQLMetrics.Operation, elapsed: Duration, error: any Error) {
        guard isEnabled else { return }
        statement(operation, elapsed: elapsed, rows: nil)
        let kind = (error as? DepotError)?.kind.description ?? "other"
        let counter = errors.withLock { errors in
            if let counter = errors[kind] { return counter }
            let counter = Counter(
                label: "depot_errors_total", dimensions: [system] + settings.dimensions + [("kind", kind)],
                factory: settings.factory)
            errors[kind] = counter
            return counter
        }
        counter.increment()
    }

    /// A transaction ended, committed or not, after `elapsed`.
    package func transaction(committed: Bool, elapsed: Duration) {
        guard isEnabled else { return }
        (committed ? commits : rollbacks).increment()
        transactionDuration.record(duration: elapsed)
    }

    /// Observers' shared query ran again, taking `elapsed`, its result ready `sinceCommit` after
    /// the commit that woke it.
    package func requeried(_ elapsed: Duration, sinceCommit: Duration?) {
        guard isEnabled else { return }
        requeries.increment()
        requeryDuration.record(duration: elapsed)
        if let sinceCommit { observationLatency.record(duration: sinceCommit) }
    }

    /// A transaction waited `elapsed` for the store's write lock.
    package func waitedForLock(_ elapsed: Duration) {
        guard isEnabled else { return }
        lockWait.record(duration: elapsed)
    }
}
