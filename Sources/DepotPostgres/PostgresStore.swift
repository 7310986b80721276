import Depot
import DepotSQL
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Depot on a PostgreSQL server, through PostgresNIO's connection pool.
///
/// The same entities, queries and repositories as on ``InMemoryStore`` or `SQLiteStore`, with the
/// same answers (the DepotTesting conformance suite runs unchanged on every store):
///
/// ```swift
/// let store = try PostgresStore(url: "postgres://app:secret@127.0.0.1:5432/app")
/// let airports = store.repository(Airport.self)
/// try await airports.upsert(list)
/// let norwegian = try await airports.fetch(where: \.country == "NO", orderBy: .ascending(\.name))
/// ```
///
/// Tables are created on first use with native types (`boolean`, `bigint`, `double precision`,
/// `numeric`, `text`, `bytea`, `timestamptz`, `uuid`, `jsonb`) and checked against the entity
/// when they exist. Text compares by code point (`COLLATE "C"`), as on every store. For
/// case-insensitive matching each text column has a folded copy, `"name#folded"`, that Depot
/// writes with the column (PostgreSQL has no function equal to ``TextFolding/fold(_:)``).
///
/// Writes of many rows bind one array per column (`INSERT … SELECT * FROM UNNEST(…)`), thousands
/// of rows per statement. Transactions run on one pooled connection; a store serializes its
/// own transactions, as every Depot store does. Commits are announced to observers of this store
/// and, through `LISTEN`/`NOTIFY`, to other stores on the same database: every Depot table carries
/// a statement-level trigger (`depot_commits`) that announces its changes when they commit, so
/// writes by other processes and by plain SQL sessions (`psql`) reach observers too.
public final class PostgresStore: Store {
    /// Where and how to connect.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String?
        /// The PostgreSQL schema (namespace) Depot's tables live in; created if missing. `nil`
        /// uses the server's search path (usually `public`).
        public var schema: String?
        /// The most connections the pool opens (at least one).
        public var maximumConnections: Int = 20
        /// How long an operation waits for a connection before failing with a `.connection` error.
        public var connectTimeout: Duration = .seconds(10)
        /// TLS for the connection (PostgresNIO's setting); plain TCP by default.
        public var tls: PostgresClient.Configuration.TLS = .disable

        public init(
            host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil,
            schema: String? = nil
        ) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            self.schema = schema
        }

        /// A configuration from a `postgres://user:password@host:port/database` URL; the query
        /// item `schema` sets ``schema``.
        ///
        /// - Throws: ``DepotError`` of kind `.connection` naming what is missing or malformed.
        public init(url: String) throws {
            guard let components = URLComponents(string: url),
                components.scheme == "postgres" || components.scheme == "postgresql"
            else {
                throw DepotError(.connection, "'\(Self.redacted(url))' is not a postgres:// URL")
            }
            guard let host = components.host, !host.isEmpty else {
                throw DepotError(.connection, "the URL '\(Self.redacted(url))' names no host")
            }
            guard let user = components.user, !user.isEmpty else {
                throw DepotError(.connection, "the URL '\(Self.redacted(url))' names no user")
            }
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            self.init(
                host: host, port: components.port ?? 5432, username: user.removingPercentEncoding ?? user,
                password: components.password.map { $0.removingPercentEncoding ?? $0 },
                database: path.isEmpty ? nil : path,
                schema: components.queryItems?.first { $0.name == "schema" }?.value)
        }

        /// `url` with its password replaced by `***`, for messages and logs.
        public static func redacted(_ url: String) -> String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "***"
            return components.string ?? url
        }

        var address: String { "\(host):\(port)" + (database.map { "/\($0)" } ?? "") }
    }

    /// The configuration the store connects with.
    public let configuration: Configuration
    let client: PostgresClient
    private let runTask: Task<Void, Never>
    let renderer = SQLRenderer(dialect: .postgres)
    let writeLock = AsyncLock()
    let broadcaster = CommitBroadcaster()
    /// Tables known to exist with the expected shape.
    let verifiedTables = Mutex<Set<TableDescription>>([])
    /// Whether the schema and functions are in place.
    private let isPrepared = Mutex(false)
    private let prepareLock = AsyncLock()
    /// This store's name in `NOTIFY` payloads, so it ignores its own commits.
    let identity = UUID().uuidString
    let listener = Mutex<Task<Void, Never>?>(nil)
    /// Whether the listener's `LISTEN` is in force.
    let listening = ListeningFlag()

    /// Connects to the server `configuration` names. Connections open on first use; an
    /// unreachable server surfaces as a `.connection` error from the first operation.
    public init(configuration: Configuration) {
        self.configuration = configuration
        var settings = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: configuration.tls)
        settings.options.maximumConnections = max(1, configuration.maximumConnections)
        settings.options.connectTimeout = configuration.connectTimeout
        if let schema = configuration.schema {
            settings.options.additionalStartupParameters = [("search_path", SQLDialect.postgres.quote(schema))]
        }
        client = PostgresClient(configuration: settings, backgroundLogger: PostgresOperations.logger)
        let client = client
        runTask = Task { await client.run() }
    }

    /// Connects to the server a `postgres://user:password@host:port/database` URL names.
    public convenience init(url: String) throws {
        self.init(configuration: try Configuration(url: url))
    }

    deinit {
        listener.withLock { $0?.cancel() }
        runTask.cancel()
    }

    /// Closes the pool's connections. Later operations fail.
    public func close() async {
        listener.withLock { $0?.cancel() }
        runTask.cancel()
        await runTask.value
    }

    /// Drops the configured ``Configuration/schema`` and every table in it: for tests and scratch
    /// schemas.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when no schema is configured (Depot never
    ///   drops the server's default schema).
    public func dropSchema() async throws {
        guard let schema = configuration.schema else {
            throw DepotError(.invalidQuery, "dropSchema() needs a configured schema; none is set")
        }
        try await withConnection { connection in
            try await PostgresOperations.run(
                "DROP SCHEMA IF EXISTS \(SQLDialect.postgres.quote(schema)) CASCADE", on: connection)
        }
        verifiedTables.withLock { $0.removeAll() }
        isPrepared.withLock { $0 = false }
    }

    // MARK: - Connections

    /// Runs `body` on a pooled connection, failing with a `.connection` error when none can be
    /// had within ``Configuration/connectTimeout``. Reads retry once on a connection the server
    /// closed (after a restart, idle pooled connections are stale).
    func withConnection<T: Sendable>(
        retryingClosed: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            return try await leased(body)
        } catch let error as DepotError where retryingClosed && error.kind == .connection {
            // `leased` has already named the failure; the cause tells a stale connection apart.
            guard let cause = error.underlying as? PSQLError,
                cause.code == .serverClosedConnection || cause.code == .clientClosedConnection
            else { throw error }
            return try await leased(body)
        }
    }

    private func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws
        -> T
    {
        let started = StartFlag()
        let client = client
        let timeout = configuration.connectTimeout
        let address = configuration.address
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        started.value.store(true, ordering: .sequentiallyConsistent)
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    if started.value.load(ordering: .sequentiallyConsistent) { return nil }
                    throw DepotError(
                        .connection, "no connection to PostgreSQL at \(address) within \(timeout) (server down?)")
                }
                while let outcome = try await group.next() {
                    if let value = outcome {
                        group.cancelAll()
                        return value
                    }
                }
                throw CancellationError()
            }
        } catch {
            // Before a connection is in hand every failure is about reaching the server; after,
            // the body's own errors pass through and PostgreSQL's are named.
            if !started.value.load(ordering: .sequentiallyConsistent), !(error is DepotError),
                !(error is CancellationError), !(error is PSQLError)
            {
                throw DepotError(
                    .connection, "PostgreSQL at \(address) could not be reached: \(error)", underlying: error)
            }
            throw PostgresErrors.map(error, address: address)
        }
    }

    /// Creates the schema and the `depot_distance` function once per store.
    func prepare() async throws {
        if isPrepared.withLock({ $0 }) { return }
        await prepareLock.lock()
        defer { prepareLock.unlock() }
        if isPrepared.withLock({ $0 }) { return }
        let schema = configuration.schema
        try await withConnection { connection in
            try await PostgresOperations.run("BEGIN", on: connection)
            do {
                // Concurrent CREATE OR REPLACE FUNCTION statements collide; one at a time.
                try await PostgresOperations.run("SELECT pg_advisory_xact_lock(74118001)", on: connection)
                if let schema {
                    try await PostgresOperations.run(
                        "CREATE SCHEMA IF NOT EXISTS \(SQLDialect.postgres.quote(schema))", on: connection)
                }
                try await PostgresOperations.run(PostgresOperations.distanceFunction, on: connection)
                try await PostgresOperations.run(PostgresOperations.announceFunction, on: connection)
                try await PostgresOperations.run("COMMIT", on: connection)
            } catch {
                try? await PostgresOperations.run("ROLLBACK", on: connection)
                throw error
            }
        }
        isPrepared.withLock { $0 = true }
    }

    // MARK: - Reads

    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try query.validate()
        try await prepare()
        return try await withConnection(retryingClosed: true) { connection in
            guard
                let query = try await query.resolved(exists: {
                    try await self.prepareTable($0, on: connection, create: false) != .missing
                })
            else {
                return try StoredRowsCursor.empty(read)
            }
            return try await PostgresOperations.scan(
                self.renderer.select(query), table: query.table, on: connection, read)
        }
    }

    public func count(_ query: SelectQuery) async throws -> Int {
        try query.validate()
        try await prepare()
        return try await withConnection(retryingClosed: true) { connection in
            guard
                let query = try await query.resolved(exists: {
                    try await self.prepareTable($0, on: connection, create: false) != .missing
                })
            else { return 0 }
            return try await PostgresOperations.count(self.renderer.count(query), on: connection)
        }
    }

    // MARK: - Transactions

    public func transaction<T: Sendable>(
        _ body: @Sendable (any StoreWriter) async throws -> T
    ) async throws -> T {
        await writeLock.lock()
        defer { writeLock.unlock() }
        try await prepare()
        // `body` is not escaping; the connection closure must be. It runs before this returns.
        return try await withoutActuallyEscaping(body) { body in
            let outcome = try await withConnection { connection -> TransactionOutcome<T> in
                try await PostgresOperations.run("BEGIN", on: connection)
                let writer = PostgresWriter(store: self, connection: connection)
                do {
                    // The tables' triggers announce the commit to other stores, naming this one.
                    try await PostgresOperations.markWriter(self.identity, on: connection)
                    let result = try await body(writer)
                    let (touched, created) = writer.end()
                    try await PostgresOperations.run("COMMIT", on: connection)
                    return TransactionOutcome(value: result, touched: touched, created: created)
                } catch {
                    writer.end()
                    try? await Task.detached { try await PostgresOperations.run("ROLLBACK", on: connection) }.value
                    throw error
                }
            }
            verifiedTables.withLock { $0.formUnion(outcome.created) }
            broadcaster.publish(StoreCommit(tables: outcome.touched))
            return outcome.value
        }
    }

    /// Announces this store's commits and, while anyone listens, commits that other stores on
    /// the same database make (PostgreSQL `LISTEN`/`NOTIFY` on the channel `depot_commits`).
    public func commits() -> AsyncStream<StoreCommit> {
        let stream = broadcaster.subscribe()
        startListening()
        return stream
    }

    private func startListening() {
        listener.withLock { task in
            guard task == nil else { return }
            task = Task { [weak self] in
                while !Task.isCancelled {
                    // Holds only what listening needs, so the store can be released meanwhile.
                    guard let parts = self?.listenerParts else { return }
                    try? await Self.listen(parts)
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
        }
    }

    private struct ListenerParts: Sendable {
        let client: PostgresClient
        let identity: String
        let broadcaster: CommitBroadcaster
        let flag: ListeningFlag
    }

    private var listenerParts: ListenerParts {
        ListenerParts(client: client, identity: identity, broadcaster: broadcaster, flag: listening)
    }

    /// Listens on the channel until the connection is lost, publishing other stores' commits to
    /// this store's schema.
    private static func listen(_ parts: ListenerParts) async throws {
        try await parts.client.withConnection { connection in
            let schema = try await PostgresOperations.currentSchema(on: connection)
            try await connection.listen(on: PostgresOperations.channel) { notifications in
                parts.flag.value.withLock { $0 = true }
                defer { parts.flag.value.withLock { $0 = false } }
                for try await notification in notifications {
                    // schema, writing store (empty outside Depot), table: commits to this schema
                    // by anyone but this store.
                    let fields = notification.payload.split(
                        separator: PostgresOperations.separator, maxSplits: 2, omittingEmptySubsequences: false)
                    guard fields.count == 3, fields[0] == schema, fields[1] != parts.identity else { continue }
                    parts.broadcaster.publish(StoreCommit(tables: [String(fields[2])]))
                }
            }
        }
    }

    /// Waits until commits of other stores are being received (the listener's `LISTEN` is in
    /// force), for at most `timeout`; returns whether they are.
    func waitUntilListening(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if listening.value.withLock({ $0 }) { return true }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }  // cancelled: do not spin
        }
        return false
    }

    // MARK: - Tables

    /// Whether `table` exists with the expected shape; creates it when `create` is true.
    ///
    /// - Returns: `.missing` only when the table does not exist and `create` is false; `.created`
    ///   when this call created it (remembered store-wide once its transaction commits).
    func prepareTable(_ table: TableDescription, on connection: PostgresConnection, create: Bool) async throws
        -> TableState
    {
        if verifiedTables.withLock({ $0.contains(table) }) { return .exists }
        let stored = try await PostgresSchemaCheck.columns(of: table.name, on: connection)
        if !stored.isEmpty {
            try await PostgresSchemaCheck.verify(table, stored: stored, on: connection, dialect: renderer.dialect)
            try await PostgresOperations.run(PostgresOperations.announceTrigger(for: table.name), on: connection)
            verifiedTables.withLock { _ = $0.insert(table) }
            return .exists
        }
        guard create else { return .missing }
        try await PostgresOperations.run(renderer.createTable(table), on: connection)
        try await PostgresOperations.run(PostgresOperations.announceTrigger(for: table.name), on: connection)
        return .created
    }

    enum TableState {
        case exists, created, missing
    }
}

/// Whether a store's `LISTEN` is in force.
final class ListeningFlag: Sendable {
    let value = Mutex(false)
}

/// Set once a pooled connection is in hand (the connect timeout no longer applies).
private final class StartFlag: Sendable {
    let value = Atomic(false)
}

/// What a committed transaction returns to ``PostgresStore/transaction(_:)``.
struct TransactionOutcome<T: Sendable>: Sendable {
    var value: T
    var touched: Set<String>
    var created: Set<TableDescription>
}

extension PostgresStore: MigratableStore, SQLMigratableStore {
    public func applyMigrations(
        _ migrations: Migrations, to target: Int?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome {
        try await SQLMigrator.migrate(migrations, to: target, on: self, progress: progress)
    }

    public func appliedMigrations() async throws -> [AppliedMigration] {
        try await SQLMigrator.applied(on: self)
    }

    public func checkSchema(of entities: [any Entity.Type]) async throws {
        try await SQLMigrator.checkSchema(of: entities, on: self)
    }

    public func eraseDatabase() async throws {
        try await SQLMigrator.erase(on: self)
    }

    package func schemaChanged() {
        verifiedTables.withLock { $0.removeAll() }
    }

    package func verifyTable(_ table: TableDescription) async throws -> Bool {
        try await prepare()
        return try await withConnection { connection in
            try await self.prepareTable(table, on: connection, create: false) != .missing
        }
    }
}
