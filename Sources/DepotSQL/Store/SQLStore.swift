import Depot
import Logging
import Synchronization
import Tracing

/// A `Store` on a SQL database: one implementation of reads, transactions, table verification,
/// migrations and commit announcements over any ``SQLEngine``.
///
/// `SQLiteStore` (DepotSQLite) and `PostgresStore` (DepotPostgres) are this class over their
/// engines, so both engines answer every call with the same code and the same statements,
/// rendered by ``SQLRenderer`` in the engine's dialect:
///
/// ```swift
/// let store = try SQLiteStore(path: "airports.sqlite")  // SQLStore<SQLiteEngine>
/// let norwegian = try await store.repository(Airport.self).fetch(where: \.country == "NO")
/// // SQLite:     SELECT "icao", … FROM "airports" WHERE "country" = ? ORDER BY "icao"
/// // PostgreSQL: SELECT "icao", … FROM "airports" WHERE "country" COLLATE "C" = $1
/// //             ORDER BY "icao" COLLATE "C" ASC NULLS FIRST
/// ```
///
/// Tables are created on the first write that needs them (`CREATE TABLE IF NOT EXISTS`) and
/// checked against the entity the first time they are used; a table that differs fails with
/// `DepotError.Kind.schemaMismatch` listing every difference. Transactions run one at a time
/// (`BEGIN IMMEDIATE` on SQLite, `BEGIN` on PostgreSQL), each on the engine's writer connection.
public final class SQLStore<Engine: SQLEngine>: Store, SQLRunning {
    /// The engine the store runs on.
    public let engine: Engine
    /// Renders every statement the store sends, in the engine's dialect.
    public let renderer: SQLRenderer
    let writeLock = AsyncLock()
    let broadcaster = CommitBroadcaster()
    /// Tables known to exist with the expected shape, adopted by the engine (ready for writes).
    let verifiedTables = Mutex<Set<TableDescription>>([])
    /// Tables a read found with the expected shape, not yet adopted: reads never write.
    let readableTables = Mutex<Set<TableDescription>>([])
    /// Search indexes found by a query (``SearchIndexProbe/query(_:)``), by that query.
    let readableSearchIndexes = Mutex<Set<SQLStatement>>([])
    /// The search indexes whose queues commits fold (SQLite).
    let searchQueues = SearchQueueCatalog()

    /// Where every statement is logged and counted (``SQLLogging``, ``SQLMetrics``).
    package let instruments: SQLInstruments

    /// A store on `engine`; its metrics are made now, through the engine's ``SQLEngine/metrics``.
    public convenience init(engine: Engine) {
        self.init(engine: engine, instrumented: true)
    }

    /// A store on `engine` that, with `instrumented` false, never calls its log, metrics or tracer:
    /// the baseline against which the benchmarks measure what the default (no-op) instruments cost.
    @_spi(Benchmarks) public init(engine: Engine, instrumented: Bool) {
        self.engine = engine
        self.renderer = SQLRenderer(dialect: engine.dialect)
        self.instruments = SQLInstruments(
            logging: engine.logging, meters: SQLMeters(engine.metrics, dialect: engine.dialect),
            tracing: engine.tracing, system: engine.dialect.telemetrySystem,
            isEnabled: instrumented)
    }

    /// A connection of the engine that logs and counts what it runs.
    package typealias Connection = InstrumentedConnection<Engine.Connection>

    /// Lends a reader connection of the engine, logging and counting what it runs; with
    /// `primary`, one of the server the writer writes to (``SQLEngine/withPrimaryReader(_:)``).
    func withReader<T: Sendable>(
        primary: Bool = false, _ body: @escaping @Sendable (Connection) async throws -> T
    ) async throws -> T {
        let instruments = instruments
        let instrumented = { @Sendable (base: Engine.Connection) in
            try await body(InstrumentedConnection(base, instruments: instruments))
        }
        return try await primary ? engine.withPrimaryReader(instrumented) : engine.withReader(instrumented)
    }

    // MARK: - Reads

    /// Runs `query` on a reader connection; a table that does not exist reads as empty.
    ///
    /// The first time a table is read, its catalog entry is checked against `query.table`.
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` for a query naming a column its table lacks
    ///   or with a negative limit or offset, `.schemaMismatch` when the stored table differs,
    ///   `.storage` or `.connection` when the engine fails; and whatever `read` throws.
    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try query.validate()
        try await engine.prepare()
        return try await foldingSearchQueues {
            try await withReader { connection in
                guard let query = try await self.resolved(query, on: connection) else {
                    return try StoredRowsCursor.empty(read)
                }
                let statement = self.renderer.select(query)
                do {
                    return try await connection.scan(statement, table: query.resultTable, read)
                } catch  where self.engine.isMissingTable(error, query.table) {
                    return try StoredRowsCursor.empty(read)
                }
            }
        }
    }

    /// Counts the rows matching `query` on a reader connection (0 for a table that does not exist).
    ///
    /// - Throws: `DepotError`, as ``scan(_:_:)`` does.
    public func count(_ query: SelectQuery) async throws -> Int {
        try query.validate()
        try await engine.prepare()
        return try await foldingSearchQueues {
            try await withReader { connection in
                guard let query = try await self.resolved(query, on: connection) else { return 0 }
                do {
                    return try await connection.count(self.renderer.count(query))
                } catch  where self.engine.isMissingTable(error, query.table) {
                    return 0
                }
            }
        }
    }

    /// Runs a hand-written statement on a reader connection (see `SQL`).
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` for a statement without text for this
    ///   dialect or with an invalid identifier; the engine's error when it refuses the statement.
    public func rows(_ statement: SQL) async throws -> SQLRows {
        let rendered = try renderer.render(statement)
        try await engine.prepare()
        return try await withReader { connection in
            try await self.readingOnly(on: connection) { try await connection.rows(rendered) }
        }
    }

    /// Runs a hand-written statement on a reader connection, its result shaped as `table`.
    ///
    /// - Throws: What ``rows(_:)`` throws, and what `read` throws.
    public func scan<Result: Sendable>(
        _ statement: SQL, shapedAs table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        let rendered = try renderer.render(statement, shapedAs: table)
        try await engine.prepare()
        return try await withReader { connection in
            try await self.readingOnly(on: connection) { try await connection.scan(rendered, table: table, read) }
        }
    }

    /// Runs `body`, a hand-written statement outside a transaction, so that it can only read
    /// (``SQLRenderer/readOnlyBegin``): reads never write, on every store. A statement that writes
    /// fails with `.invalidQuery` and writes nothing.
    private func readingOnly<T: Sendable>(
        on connection: Connection, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let begin = renderer.readOnlyBegin else { return try await body() }
        let rollback = renderer.rollback
        try await connection.execute(begin)
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        // The connection goes back to the pool: end the transaction even if the task is cancelled.
        try await Self.uncancelled { try await connection.execute(rollback) }
        return try result.get()
    }

    /// Computes `query` with one `GROUP BY` statement on a reader connection (a table that does
    /// not exist answers `AggregateQuery.emptyResult`).
    ///
    /// - Throws: `DepotError`, as ``scan(_:_:)`` does; `.overflow` when an integer sum exceeds Int64.
    public func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try query.validate()
        try await engine.prepare()
        return try await foldingSearchQueues {
            try await withReader { connection in
                guard
                    let query = try await query.resolved(exists: {
                        try await self.prepareTable($0, on: connection, create: false) != .missing
                    })
                else { return query.emptyResult }
                try await SearchIndexCheck.require(query.predicate, table: query.table, dialect: self.renderer.dialect)
                {
                    try await self.searchIndexExists($0, on: connection)
                }
                do {
                    return try await self.renderer.run(query, on: connection)
                } catch  where self.engine.isMissingTable(error, query.table) {
                    return query.emptyResult
                }
            }
        }
    }
    /// `query` with its subqueries resolved against the tables that exist; `nil` when its own
    /// table does not.
    private func resolved(_ query: SelectQuery, on connection: Connection) async throws -> SelectQuery? {
        let exists = { (table: TableDescription) in
            try await self.prepareTable(table, on: connection, create: false) != .missing
        }
        guard let resolved = try await query.resolved(exists: exists) else { return nil }
        try await SearchIndexCheck.require(
            resolved.predicate, ordering: resolved.ordering, table: resolved.table, dialect: renderer.dialect
        ) { try await self.searchIndexExists($0, on: connection) }
        return resolved
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction on the engine's writer connection: everything it wrote
    /// commits together, or nothing if it throws. Transactions of a store run one at a time.
    ///
    /// `BEGIN`, `COMMIT` and `ROLLBACK` run even when the calling task is cancelled, so a
    /// transaction is never left half-open.
    ///
    /// - Throws: The error `body` throws, after `ROLLBACK`; `DepotError` of kind `.transaction`
    ///   when the writer is used after `body` returned; the engine's error (`.storage`,
    ///   `.connection`, `.transaction`) when `BEGIN` or `COMMIT` fails.
    public func transaction<T: Sendable>(
        _ body: @Sendable (any StoreWriter) async throws -> T
    ) async throws -> T {
        let wholeCall = StoreCall.ownsTransaction
        return try await StoreCall.$ownsTransaction.withValue(false) {
            try await withWriter(isWholeCall: wholeCall) { try await body($0) }
        }
    }

    /// ``transaction(_:)`` with the writer's own type, for what runs on the SQL session itself
    /// (migrations). With `suspendingForeignKeys`, an engine that enforces foreign keys per
    /// connection (SQLite, ``SQLRenderer/foreignKeySuspension``) stops before `BEGIN` and starts
    /// again after the transaction ends, and the transaction fails before committing if it left
    /// more references dangling than it found. `isWholeCall`: one store-level call is the whole
    /// transaction (`StoreCall`), so its writes need no savepoints.
    func withWriter<T: Sendable>(
        suspendingForeignKeys: Bool = false, isWholeCall: Bool = false,
        _ body: @Sendable (SQLWriter<Engine>) async throws -> T
    ) async throws -> T {
        if writeLock.isHeldByCurrentTask { throw DepotError.transactionInsideTransaction }
        let waiting = instruments.isEnabled ? ContinuousClock.now : nil
        return try await writeLock.withLock {
            if let waiting { instruments.meters.waitedForLock(ContinuousClock.now - waiting) }
            return try await runTransaction(
                suspendingForeignKeys: suspendingForeignKeys, isWholeCall: isWholeCall, body)
        }
    }

    private func runTransaction<T: Sendable>(
        suspendingForeignKeys: Bool, isWholeCall: Bool, _ body: @Sendable (SQLWriter<Engine>) async throws -> T
    ) async throws -> T {
        try await instruments.tracing.span("transaction", kind: .internal) { span in
            span.attributes["db.system.name"] = instruments.system
            return try await runTransactionInSpan(
                suspendingForeignKeys: suspendingForeignKeys, isWholeCall: isWholeCall, body)
        }
    }

    private func runTransactionInSpan<T: Sendable>(
        suspendingForeignKeys: Bool, isWholeCall: Bool, _ body: @Sendable (SQLWriter<Engine>) async throws -> T
    ) async throws -> T {
        try await engine.prepare()
        let renderer = renderer
        let instruments = instruments
        // `body` is not escaping; the connection closure must be. It runs before this returns.
        return try await withoutActuallyEscaping(body) { body in
            let outcome = try await engine.withWriter { base -> TransactionOutcome<T> in
                let connection = InstrumentedConnection(base, instruments: instruments)
                guard suspendingForeignKeys, let suspension = renderer.foreignKeySuspension,
                    try await connection.count(suspension.enforced) == 1
                else { return try await self.inTransaction(on: connection, isWholeCall: isWholeCall, body) }
                try await Self.uncancelled { try await connection.execute(suspension.suspend) }
                let outcome: Result<TransactionOutcome<T>, any Error>
                do {
                    outcome = .success(
                        try await self.inTransaction(on: connection, isWholeCall: isWholeCall) { writer in
                            let before = try await connection.count(suspension.danglingReferences)
                            let result = try await body(writer)
                            let after = try await connection.count(suspension.danglingReferences)
                            if after > before {
                                throw DepotError(
                                    .migration,
                                    "the step left \(after - before) foreign key reference(s) without the row they "
                                        + "name (PRAGMA foreign_key_check lists them)")
                            }
                            return result
                        })
                } catch {
                    outcome = .failure(error)
                }
                try await Self.uncancelled { try await connection.execute(suspension.resume) }
                return try outcome.get()
            }
            verifiedTables.withLock { $0.formUnion(outcome.written.created) }
            broadcaster.publish(outcome.written.commit)
            withExtendedLifetime(outcome.ticket) {}
            return outcome.value
        }
    }

    /// Runs `body` between `BEGIN` and `COMMIT` (or `ROLLBACK`) on `connection`.
    private func inTransaction<T: Sendable>(
        on connection: Connection, isWholeCall: Bool, _ body: @Sendable (SQLWriter<Engine>) async throws -> T
    ) async throws -> TransactionOutcome<T> {
        let renderer = renderer
        let logger = instruments.logging.logger
        let meters = instruments.meters
        let instrumented = instruments.isEnabled
        let started = ContinuousClock.now
        try await Self.uncancelled { try await connection.execute(renderer.begin) }
        let writer = SQLWriter(store: self, connection: connection, isWholeCall: isWholeCall)
        do {
            try await self.engine.transactionBegan(on: connection.base)
            let result = try await body(writer)
            // A call that failed and could not be undone: its error was caught by the body,
            // but what it wrote must not commit.
            if let broken = writer.books.broken { throw broken }
            try await writer.foldWrittenSearchQueues()
            let written = writer.end()
            // Under way from before readers can see it until announced (or failed): observers
            // that re-read only the announced rows check that no commit was under way meanwhile.
            let ticket = broadcaster.commitStarting()
            let committed = try await Self.uncancelled { try await connection.commit(renderer.commit) }
            guard committed else {
                throw DepotError(
                    .transaction,
                    "the transaction did not commit: the database had already aborted it (a statement "
                        + "in it failed), so nothing it wrote was kept")
            }
            if instrumented {
                let elapsed = ContinuousClock.now - started
                meters.transaction(committed: true, elapsed: elapsed)
                logger.debug(
                    "transaction committed",
                    metadata: [
                        "duration_ms": "\(SQLLogging.milliseconds(elapsed))",
                        "tables": .array(written.touched.tables.sorted().map { .string($0) }),
                    ])
            }
            return TransactionOutcome(value: result, written: written, ticket: ticket)
        } catch {
            if instrumented {
                let elapsed = ContinuousClock.now - started
                meters.transaction(committed: false, elapsed: elapsed)
                logger.debug(
                    "transaction rolled back",
                    metadata: ["duration_ms": "\(SQLLogging.milliseconds(elapsed))", "error": "\(error)"])
            }
            writer.end()
            // A failed COMMIT may have ended the transaction already; ROLLBACK then fails
            // with "no transaction", which changes nothing.
            _ = try? await Self.uncancelled { try await connection.execute(renderer.rollback) }
            throw error
        }
    }

    /// Runs `body` even if the calling task is cancelled: beginning, committing and rolling back
    /// must not be skipped halfway.
    /// The caller's trace context goes along (spans of `body` stay children of the caller's).
    @discardableResult
    static func uncancelled<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let context = InstrumentationContext.current
        // On the writer's thread when the engine has one, as the rest of the transaction is.
        return try await Task.detached(executorPreference: WriterExecutor.current) {
            try await InstrumentationContext.withValue(context) { try await body() }
        }
        .value
    }

    /// Announces this store's commits and, while anyone listens, the commits others make to the
    /// same database as the engine sees them (see ``SQLEngine/watchExternalCommits(_:)``).
    public func commits() -> AsyncStream<StoreCommit> {
        let stream = broadcaster.subscribe()
        engine.watchExternalCommits(broadcaster)
        return stream
    }

    // MARK: - Tables

    /// Whether `table` exists with the expected shape; creates it when `create` is true.
    ///
    /// A read (`create` false) only looks at the catalog. A write (`create` true) also has the
    /// engine adopt the table (``SQLEngine/adopt(_:on:)``: PostgreSQL's commit trigger), inside the
    /// writing transaction.
    ///
    /// - Returns: ``TableState/missing`` only when the table does not exist and `create` is false;
    ///   ``TableState/prepared`` when this call created or adopted it (to be remembered store-wide
    ///   once its transaction commits).
    /// - Throws: `DepotError.Kind.schemaMismatch` listing each difference when the stored table
    ///   differs from `table`.
    func prepareTable(_ table: TableDescription, on connection: Connection, create: Bool) async throws
        -> TableState
    {
        if verifiedTables.withLock({ $0.contains(table) }) { return .exists }
        guard create else {
            if readableTables.withLock({ $0.contains(table) }) { return .exists }
            guard try await checkStored(table, on: connection) else { return .missing }
            readableTables.withLock { _ = $0.insert(table) }
            return .exists
        }
        var exists = try await checkStored(table, on: connection)
        if !exists, let lock = renderer.tableCreationLock {
            // Another store may be creating it: wait for it, then look again.
            try await connection.execute(lock)
            exists = try await checkStored(table, on: connection)
        }
        if !exists {
            for statement in renderer.createTableWithIndexes(table) {
                try await connection.execute(SQLStatement(sql: statement))
            }
        }
        try await engine.adopt(table, on: connection.base)
        return .prepared
    }

    /// Whether the search index `probe` looks for exists. An index found is remembered until
    /// ``schemaChanged()``.
    func searchIndexExists(_ probe: SearchIndexProbe, on connection: Connection) async throws -> Bool {
        switch probe {
        case .table(let table): return try await prepareTable(table, on: connection, create: false) != .missing
        case .query(let query):
            if readableSearchIndexes.withLock({ $0.contains(query) }) { return true }
            guard let count = try await connection.texts(query).first?.first ?? nil, count != "0" else { return false }
            readableSearchIndexes.withLock { _ = $0.insert(query) }
            return true
        }
    }

    /// Checks `table` against the catalog if the database has it; false if it has not.
    private func checkStored(_ table: TableDescription, on connection: Connection) async throws -> Bool {
        let stored = try await connection.catalogColumns(of: table.name, renderer)
        guard !stored.isEmpty else { return false }
        let indexes = table.indexes.isEmpty ? [] : try await connection.catalogIndexes(of: table.name, renderer)
        try SchemaDrift.verify(table, stored: stored, indexes: indexes, dialect: renderer.dialect)
        return true
    }

    /// What ``prepareTable(_:on:create:)`` found.
    enum TableState {
        /// The table is there with the expected shape (and adopted, for a write).
        case exists
        /// This call created the table, or found it and adopted it for writing.
        case prepared
        /// The table does not exist (reads only).
        case missing
    }

    /// Forgets which tables were checked: their shape may have changed (after a migration, or
    /// after the engine dropped them).
    public func schemaChanged() {
        verifiedTables.withLock { $0.removeAll() }
        readableTables.withLock { $0.removeAll() }
        readableSearchIndexes.withLock { $0.removeAll() }
        searchQueues.forget()
    }
}

/// What a committed transaction returns to ``SQLStore/withWriter(_:)``.
struct TransactionOutcome<T: Sendable>: Sendable {
    var value: T
    var written: WriterBookkeeping.Written
    /// Held until the commit is announced.
    var ticket: CommitTicket
}

extension SQLStore: CommitProgressReporting {
    package var commitProgress: CommitProgress? { broadcaster.current }
}

extension SQLStore: ObservationReporting {
    /// Whether observers' re-queries are measured: when the store has metrics (``SQLMetrics``).
    public var isReportingObservations: Bool { instruments.isEnabled && instruments.meters.isEnabled }

    /// Counts and times a re-query of observers (``SQLMetrics``: `depot_observation_…`).
    public func observationRequeried(duration: Duration, sinceCommit: Duration?) {
        instruments.meters.requeried(duration, sinceCommit: sinceCommit)
    }
}

extension DepotError {
    /// A hand-written statement outside a transaction tried to write: `store.sql` only reads.
    package static func writeOutsideTransaction(engine: String, underlying: (any Error)? = nil) -> DepotError {
        DepotError(
            .invalidQuery,
            "\(engine) refused a hand-written statement that writes outside a transaction: store.sql only reads; "
                + "write with store.write { tx in try await tx.sql(…) }",
            underlying: underlying)
    }
}
