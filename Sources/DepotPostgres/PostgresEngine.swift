import CoreMetrics
import Depot
import DepotSQL
import Foundation
import Logging
import Metrics
import PostgresNIO
import Synchronization

/// PostgreSQL as `SQLStore` drives it: PostgresNIO's connection pool, Depot's functions
/// installed once per store, and `LISTEN`/`NOTIFY` for commits made by others.
///
/// Use it through ``PostgresStore``: `try PostgresStore(url: "postgres://app@127.0.0.1/app")`.
public final class PostgresEngine: SQLEngine {
    /// Where and how to connect.
    ///
    /// ```swift
    /// var configuration = PostgresStore.Configuration(
    ///     host: "db.internal", username: "app", password: secret, database: "app", schema: "airports")
    /// configuration.maximumConnections = 8
    /// let store = PostgresStore(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The server's host name or IP address.
        public var host: String
        /// The server's TCP port; 5432 by default.
        public var port: Int
        /// The role to log in as.
        public var username: String
        /// The role's password; `nil` when the server does not ask for one (trust, peer).
        public var password: String?
        /// The database to connect to; `nil` uses the server's default (the one named like the
        /// user).
        public var database: String?
        /// The PostgreSQL schema (namespace) Depot's tables live in; created if missing. `nil`
        /// uses the server's search path (usually `public`).
        public var schema: String?
        /// The most connections the pool opens (at least one).
        public var maximumConnections: Int = 20
        /// How long an operation waits for a connection before failing with a `.connection` error.
        public var connectTimeout: Duration = .seconds(10)
        /// How often an idle pooled connection sends `SELECT 1`; `nil` (the default): never.
        ///
        /// ```swift
        /// configuration.keepAliveInterval = .seconds(20)  // a NAT that drops flows quiet for 30 s
        /// ```
        /// The pool closes a connection idle for a minute, so a NAT, firewall or load balancer that
        /// silently drops flows quiet for longer (typically 4–6 minutes) never sees one. Set this
        /// when one in between drops them sooner: a dropped flow is not seen as closed, and a call
        /// on it waits for TCP to give up. Each connection the pool takes back then arms a timer in
        /// PostgresNIO's pool, a task and wake-ups on every call: about 0.05 ms (measured on a bare
        /// `PostgresClient`, `depot-bench --only "pg find by key"`: 0.46 against 0.41 ms a lookup).
        public var keepAliveInterval: Duration?
        /// How long reads keep a pooled connection between them (with a pool of four or more):
        /// a read that finds it free skips PostgresNIO's lease and return (about 0.1 ms a call,
        /// `depot-bench --only "pg find by key"`). It goes back to the pool after this long without
        /// a read, when it closes, or when the store closes, so nothing holds a connection open, or
        /// reconnects, while nobody reads. Zero or less: every read leases from the pool.
        ///
        /// ```swift
        /// configuration.keptReaderIdleTime = .zero  // many stores sharing a small server
        /// ```
        public var keptReaderIdleTime: Duration = .seconds(1)
        /// TLS for the connection (PostgresNIO's setting); plain TCP by default.
        public var tls: PostgresClient.Configuration.TLS = .disable
        /// Where and how much the store logs (`SQLLogging`); by default a logger labelled
        /// `depot.postgres`.
        public var logging: SQLLogging = .standard(label: "depot.postgres")
        /// Which metrics the store reports (`SQLMetrics`); `nil`: through swift-metrics' factory as
        /// bootstrapped when the store is made.
        public var metrics: SQLMetrics?
        /// Where the store reports spans (`SQLTracing`); `nil`: the tracer swift-distributed-tracing
        /// is bootstrapped with when the store is made.
        public var tracing: SQLTracing?
        /// Where the listener for other processes' commits connects (a `postgres://` URL), when
        /// not where the store does: its `LISTEN` needs a session of its own, which a
        /// transaction-mode pooler (PgBouncer) does not keep. Point it at the server itself; it
        /// takes one connection while anyone observes. `nil`: the store's own address.
        ///
        /// ```swift
        /// var configuration = try PostgresStore.Configuration(url: "postgres://app@pgbouncer:6432/app")
        /// configuration.listenerURL = "postgres://app@db:5432/app"
        /// ```
        ///
        /// Whichever address it uses, the listener checks that it hears a notification sent through
        /// the store's pool; when it does not (a pooler in between), it logs an error naming this
        /// setting, and observers see this store's own commits only.
        public var listenerURL: String?
        /// How long the listener waits to hear its probe before it logs that it hears nothing.
        package var listenerProbeTimeout: Duration = .seconds(30)

        /// Streaming replicas (hot standbys of the store's server) that serve its reads, as
        /// `postgres://` URLs. The store's own address stays the primary: writes, transactions,
        /// migrations, schema checks and observers' reads go there.
        ///
        /// ```swift
        /// var configuration = try PostgresStore.Configuration(url: "postgres://app@db-primary/app")
        /// configuration.replicaURLs = ["postgres://app@db-replica-1/app", "postgres://app@db-replica-2/app"]
        /// ```
        ///
        /// Reads take the replicas in turn, each with a pool of ``maximumConnections``. A read after
        /// this store's own write sees it: a replica serves it once it has replayed the write
        /// (waiting up to ``readYourWritesWait``), else the primary does. A replica further behind
        /// than ``maximumReplicaLag``, one that does not answer within ``replicaTimeout``, or one
        /// that is not a standby is skipped (a warning in the log, `depot_replica_serving` 0) until
        /// a check, every ``replicaCheckInterval``, finds it serving again. Other processes' writes
        /// reach reads on a replica once it has replayed them, a moment later than on the primary.
        public var replicaURLs: [String] = []
        /// How far a replica may be behind the primary and still serve reads: 5 seconds by default.
        /// Measured as the time since its last replayed transaction while it has received log it
        /// has not replayed (0 when it has replayed all it received).
        public var maximumReplicaLag: Duration = .seconds(5)
        /// How long a read after this store's own write waits for a replica to replay that write
        /// before it reads on the primary instead: 1 second by default (`.zero`: never waits).
        public var readYourWritesWait: Duration = .seconds(1)
        /// How long a replica has to lend a connection or answer a check before it counts as
        /// unavailable: 2 seconds by default.
        public var replicaTimeout: Duration = .seconds(2)
        /// How often each replica's position and lag are checked: every second by default.
        public var replicaCheckInterval: Duration = .seconds(1)

        /// A configuration for the server at `host`; the pool options keep their defaults
        /// (20 connections, a 10-second connect timeout, no TLS).
        ///
        /// Nothing connects yet: a wrong address surfaces as a `.connection` error from the store's
        /// first operation.
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
        /// item `schema` sets ``schema``, and `connect_timeout` (seconds, as libpq spells it)
        /// ``connectTimeout``: `postgres://app@db/app?schema=depot&connect_timeout=30`.
        ///
        /// - Throws: `DepotError` of kind `.connection` naming what is missing or malformed.
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
            // `user`, `password` and `path` come percent-decoded once already: decoding them again
            // would turn a password's literal `%41` into `A`.
            self.init(
                host: host, port: components.port ?? 5432, username: user, password: components.password,
                database: path.isEmpty ? nil : path,
                schema: components.queryItems?.first { $0.name == "schema" }?.value)
            if let problem = schemaProblem { throw problem }
            if let text = components.queryItems?.first(where: { $0.name == "connect_timeout" })?.value {
                guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
                    throw DepotError(
                        .connection, "connect_timeout '\(text)' in the URL is not a number of seconds (1 to 86400)")
                }
                connectTimeout = .milliseconds(Int64(seconds * 1000))
            }
        }

        /// Why ``schema`` cannot be used, if it cannot: Depot names schemas like tables (letters,
        /// digits and `_`, not starting with a digit, at most 63 bytes: longer names the server
        /// would cut, so two could become one).
        var schemaProblem: DepotError? {
            guard let schema, !TableDescription.isValidIdentifier(schema) else { return nil }
            return DepotError(
                .connection,
                "the schema name '\(schema)' is not a valid identifier (letters, digits, _, not starting with a "
                    + "digit; at most 63 bytes)")
        }

        /// Why ``keepAliveInterval`` cannot be used, if it cannot: a ping every zero seconds would
        /// keep every idle connection busy.
        var keepAliveProblem: DepotError? {
            guard let keepAliveInterval, keepAliveInterval <= .zero else { return nil }
            return DepotError(
                .connection, "keepAliveInterval \(keepAliveInterval) is not a positive duration (nil turns pings off)")
        }

        /// `url` with its password replaced by `***`, for messages and logs.
        public static func redacted(_ url: String) -> String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "***"
            return components.string ?? url
        }

        var address: String { "\(host):\(port)" + (database.map { "/\($0)" } ?? "") }

        /// The configuration the listener connects with: ``listenerURL``'s address and role, this
        /// configuration's schema, timeout and TLS.
        var listenerConfiguration: Result<Configuration, DepotError> {
            guard let listenerURL else { return .success(self) }
            return elsewhere(listenerURL, setting: "listenerURL")
        }

        /// The configurations the replicas connect with: each URL's address and role, this
        /// configuration's schema, pool size, timeouts and TLS.
        var replicaConfigurations: Result<[Configuration], DepotError> {
            var replicas: [Configuration] = []
            for (index, url) in replicaURLs.enumerated() {
                switch elsewhere(url, setting: "replicaURLs[\(index)]") {
                case .success(let replica): replicas.append(replica)
                case .failure(let problem): return .failure(problem)
                }
            }
            return .success(replicas)
        }

        /// This configuration pointed at the server, database and role `url` names; `setting`
        /// names the URL in errors.
        private func elsewhere(_ url: String, setting: String) -> Result<Configuration, DepotError> {
            do {
                let parsed = try Configuration(url: url)
                var other = self
                other.host = parsed.host
                other.port = parsed.port
                other.username = parsed.username
                other.password = parsed.password
                other.database = parsed.database
                return .success(other)
            } catch let error as DepotError {
                return .failure(DepotError(.connection, "\(setting): \(error.message)", underlying: error))
            } catch {
                return .failure(DepotError(.connection, "\(setting): \(error)"))
            }
        }
    }

    /// The configuration the engine connects with.
    public let configuration: Configuration
    let client: PostgresClient
    /// The connection kept for reads while they keep coming (``Configuration/keptReaderIdleTime``);
    /// none for a pool of fewer than four, where concurrent reads would wait for a writer while
    /// it sits idle.
    let kept: KeptReader?
    private let runTask: Task<Void, Never>
    /// Whether the schema and functions are in place.
    private let isPrepared = Mutex(false)
    private let prepareLock = AsyncLock()
    /// Why the configuration cannot be used (its schema, keep-alive, listener or replica URLs; every
    /// operation throws it), if it cannot.
    private let schemaProblem: DepotError?
    /// This store's name in `NOTIFY` payloads, so it ignores its own commits.
    let identity = UUID().uuidString
    let listener = Mutex<Task<Void, Never>?>(nil)
    /// Whether the listener's `LISTEN` is in force, and whether one ever was.
    let listening = ListeningState()

    /// Connects to the server `configuration` names. Connections open on first use; an
    /// unreachable server surfaces as a `.connection` error from the first operation.
    init(configuration: Configuration) {
        self.configuration = configuration
        metrics = configuration.metrics ?? SQLMetrics()
        tracing = configuration.tracing ?? .bootstrapped
        pool = PoolMeters(metrics)
        let replicas = configuration.replicaConfigurations
        schemaProblem =
            configuration.schemaProblem ?? configuration.keepAliveProblem
            ?? {
                if case .failure(let problem) = configuration.listenerConfiguration { return problem }
                if case .failure(let problem) = replicas { return problem }
                return nil
            }()
        client = PostgresClient(
            configuration: Self.clientSettings(configuration, connections: configuration.maximumConnections),
            backgroundLogger: PostgresOperations.logger)
        kept =
            configuration.maximumConnections >= 4 && configuration.keptReaderIdleTime > .zero
            ? KeptReader(idle: configuration.keptReaderIdleTime) : nil
        let client = client
        runTask = Task { await client.run() }
        if case .success(let replicas) = replicas, !replicas.isEmpty {
            let routing = ReplicaRouting(
                replicas: replicas.map { replica in
                    PostgresReplica(
                        configuration: replica,
                        client: PostgresClient(
                            configuration: Self.clientSettings(
                                replica, connections: configuration.maximumConnections, applicationName: "depot reads"),
                            backgroundLogger: PostgresOperations.logger),
                        checker: PostgresClient(
                            configuration: Self.clientSettings(
                                replica, connections: 1, applicationName: "depot replica check"),
                            backgroundLogger: PostgresOperations.logger))
                }, metrics: metrics, logger: configuration.logging.logger)
            let primary = client
            let address = configuration.address
            let timeout = configuration.replicaTimeout
            routing.startMonitoring(
                interval: configuration.replicaCheckInterval, timeout: configuration.replicaTimeout,
                maximumLag: configuration.maximumReplicaLag,
                primaryPosition: {
                    try await Self.leased(
                        client: primary, address: address, timeout: timeout, pool: nil, answerWithin: timeout,
                        abandonable: true
                    ) { try await Self.position(on: $0) }
                })
            self.routing = routing
        } else {
            routing = nil
        }
    }

    deinit {
        listener.withLock { $0?.cancel() }
        runTask.cancel()
    }

    /// Closes the pool's connections (the replicas' too). Later operations fail.
    func close() async {
        await kept?.close()
        listener.withLock { $0?.cancel() }
        await routing?.close()
        runTask.cancel()
        await runTask.value
    }

    /// The replicas reads go to, if any are configured.
    let routing: ReplicaRouting?

    /// `PostgresDialect`.
    public var dialect: any SQLDialect { .postgres }

    /// Where and how much the store logs: ``Configuration/logging``.
    public var logging: SQLLogging { configuration.logging }

    /// Which metrics the store reports: ``Configuration/metrics``, or swift-metrics' factory as
    /// bootstrapped when the engine was made.
    public let metrics: SQLMetrics
    /// Where the store reports spans: ``Configuration/tracing``, or swift-distributed-tracing's
    /// bootstrapped tracer when the engine was made.
    public let tracing: SQLTracing
    /// Connections lent out, and how long calls waited for one.
    private let pool: PoolMeters

    // MARK: - Connections

    /// Lends a pooled connection of a replica that has replayed this store's writes (see
    /// ``Configuration/replicaURLs``), else of the primary; retries once on a connection the
    /// server closed (after a restart, idle pooled connections are stale).
    public func withReader<T: Sendable>(
        _ body: @escaping @Sendable (PostgresEngineConnection) async throws -> T
    ) async throws -> T {
        if let routing, let served = try await read(on: routing, body) { return served.value }
        return try await withPrimaryReader(body)
    }

    /// Lends a pooled connection of the primary for reads, whatever the replicas.
    public func withPrimaryReader<T: Sendable>(
        _ body: @escaping @Sendable (PostgresEngineConnection) async throws -> T
    ) async throws -> T {
        try await withConnection(retryingClosed: true) { connection in
            try await body(PostgresEngineConnection(connection: connection, address: self.configuration.address))
        }
    }

    /// Lends a pooled connection for one transaction; with replicas, notes where the write ended
    /// in the log, so this store's later reads wait for a replica to replay it.
    public func withWriter<T: Sendable>(
        _ body: @escaping @Sendable (PostgresEngineConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            let value = try await body(
                PostgresEngineConnection(connection: connection, address: self.configuration.address))
            if let routing = self.routing {
                // Committed already: a failure to read the position (a cancelled task, a lost
                // connection) must not fail the write. Its reads go to the primary until a later
                // reading of the primary's position covers it.
                let position = try? await Task { try await Self.position(on: connection) }.value
                if let position {
                    routing.wrote(upTo: position)
                } else {
                    routing.lostPosition { [weak self] in
                        guard let self else { throw CancellationError() }
                        return try await self.withConnection { try await Self.position(on: $0) }
                    }
                }
            }
            return value
        }
    }

    /// Where the primary's log ends now, as `connection` (to the primary) answers.
    static func position(on connection: PostgresConnection) async throws -> WALPosition {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: PostgresReplica.primaryPositionSQL), logger: PostgresOperations.logger)
        var position: WALPosition?
        for try await text in rows.decode(String.self) { position = WALPosition(text) }
        guard let position else { throw DepotError(.storage, "PostgreSQL answered no log position") }
        return position
    }

    /// A read's result, told apart from a declined read.
    private struct Served<T: Sendable>: Sendable { let value: T }

    /// Runs `body` on the first replica in turn that serves reads and has replayed this store's
    /// latest write (waiting up to ``Configuration/readYourWritesWait``); `nil` when none can, or
    /// the read must see the latest commits (`FreshReads`): the primary serves it then.
    private func read<T: Sendable>(
        on routing: ReplicaRouting, _ body: @escaping @Sendable (PostgresEngineConnection) async throws -> T
    ) async throws -> Served<T>? {
        if let schemaProblem { throw schemaProblem }
        if FreshReads.required {
            routing.readOnPrimary(.fresh)
            return nil
        }
        if routing.hasUnknownWrites {
            routing.readOnPrimary(.behindOwnWrite)
            return nil
        }
        let needed = routing.neededPosition
        // One wait for this store's write, shared by every replica tried.
        let deadline = ContinuousClock.now + configuration.readYourWritesWait
        var reason = ReplicaMeters.Reason.noReplica
        for replica in routing.rotation {
            guard let replayed = replica.servingPosition else { continue }
            let mustWait = needed > replayed
            do {
                let served = try await Self.leased(
                    client: replica.client, address: replica.address, timeout: configuration.replicaTimeout, pool: nil,
                    abandonable: true
                ) { connection -> Served<T>? in
                    if mustWait, try await !Self.wait(on: connection, of: replica, toReplay: needed, until: deadline) {
                        return nil
                    }
                    return Served(
                        value: try await body(
                            PostgresEngineConnection(connection: connection, address: replica.address)))
                }
                if let served {
                    routing.readOnReplica(replica)
                    return served
                }
                reason = .behindOwnWrite
            } catch let error as DepotError where error.kind == .connection {
                if Task.isCancelled { throw CancellationError() }
                // A pool with no connection free in time is busy, or its server is down: this read
                // goes elsewhere, and the replica's own check tells which.
                if !(error.underlying is NoConnectionInTime) { routing.failed(replica, error) }
                reason = .replicaFailed
            } catch let error as DepotError where Self.isReplicaBehind(error) {
                // A read a standby cancelled for a conflict with recovery, or one naming a table or
                // function it has not replayed yet: the primary answers it.
                logging.logger.notice(
                    "replica \(replica.address) could not answer a read; reading on the primary",
                    metadata: ["replica": "\(replica.address)", "error": "\(error.message)"])
                reason = .replicaFailed
            }
        }
        routing.readOnPrimary(reason)
        return nil
    }

    /// Whether a replica's failure of a read says it is behind, not that the read is wrong: a
    /// conflict with recovery, a table (42P01) or function (42883) it has not replayed yet.
    private static func isReplicaBehind(_ error: DepotError) -> Bool {
        if error.kind == .transaction { return true }
        guard let failure = error.underlying as? PSQLError, let state = failure.serverInfo?[.sqlState] else {
            return false
        }
        return state == "42P01" || state == "42883"
    }

    /// Waits until the replica on `connection` has replayed the log up to `position`, until
    /// `deadline` at most; returns whether it has.
    private static func wait(
        on connection: PostgresConnection, of replica: PostgresReplica, toReplay position: WALPosition,
        until deadline: ContinuousClock.Instant
    ) async throws -> Bool {
        var pause = Duration.milliseconds(1)
        while true {
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: PostgresReplica.replayedSQL), logger: PostgresOperations.logger)
            for try await text in rows.decode(String.self) {
                if let replayed = WALPosition(text) { replica.replayed(replayed) }
            }
            if (replica.state.withLock { $0.replayed }) >= position { return true }
            if ContinuousClock.now + pause > deadline { return false }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// Runs `body` on a pooled connection, failing with a `.connection` error when none can be
    /// had within ``Configuration/connectTimeout``. Reads retry once on a connection the server
    /// closed (after a restart, idle pooled connections are stale).
    func withConnection<T: Sendable>(
        retryingClosed: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        if let schemaProblem { throw schemaProblem }
        do {
            return try await leased(abandonable: retryingClosed, body)
        } catch let error as DepotError where retryingClosed && error.kind == .connection {
            // `leased` has already named the failure; the cause tells a stale connection apart.
            guard let cause = error.underlying as? PSQLError, Self.isSessionGone(cause) else { throw error }
            logging.logger.notice(
                "PostgreSQL closed a pooled connection or ended its session (a server restart?); reading again on a new one",
                metadata: ["address": "\(configuration.address)", "error": "\(error.message)"])
            return try await leased(abandonable: true, body)
        }
    }

    /// Whether `failure` says the connection's session is over, so a read may run again on
    /// another: the connection closed, or the server ended the session and its reason reached the
    /// next statement first (57P01 `pg_terminate_backend` or a shutdown, 57P02 a crashed sibling).
    /// A server error without a SQLSTATE is not such an answer.
    static func isSessionGone(_ failure: PSQLError) -> Bool {
        if failure.code == .serverClosedConnection || failure.code == .clientClosedConnection { return true }
        guard failure.code == .server, let state = failure.serverInfo?[.sqlState] else { return false }
        return state == "57P01" || state == "57P02"
    }

    private func leased<T: Sendable>(
        abandonable: Bool, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await Self.leased(
            client: client, address: configuration.address, timeout: configuration.connectTimeout, pool: pool,
            abandonable: abandonable, keeping: abandonable ? kept : nil, body)
    }

    /// How often the calls in flight are looked at (``CallWatch``; see
    /// ``leased(client:address:timeout:pool:answerWithin:abandonable:_:)``).
    static let closeCheck = Duration.milliseconds(250)

    /// Runs `body` on a connection of `client`'s pool, failing with a `.connection` error naming
    /// `address` when none can be had within `timeout`.
    /// With `answerWithin`, the whole call — the wait for a connection and `body` — fails with a
    /// `.connection` error after that long (the replicas' checks: a replica that stops answering
    /// must not hold its check forever).
    ///
    /// `body` runs in a task of its own, and ``CallWatch`` looks at the call while it is in flight.
    /// When it is `abandonable` (it borrows nothing from its caller's frame: reads), a call whose
    /// connection has closed under it fails with `.connection`, three ``closeCheck``s later at most,
    /// even when PostgresNIO never answers it: PostgresNIO 1.33
    /// drops a statement that reaches the channel after the channel closed (between Depot's look at
    /// `isClosed` and the write), and whoever awaits it would wait forever. Such a call is left
    /// behind, cancelled, holding what it captured. Otherwise (a transaction, whose body borrows
    /// its caller's closure) this returns only once `body` has ended, as a task group would.
    ///
    /// With `keeping` (reads), `body` runs on its kept connection when that is free, without a
    /// lease from the pool; otherwise the pooled connection it ran on is kept, if none is.
    static func leased<T: Sendable>(
        client: PostgresClient, address: String, timeout: Duration, pool: PoolMeters?,
        answerWithin: Duration? = nil, abandonable: Bool, keeping: KeptReader? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let lease = Lease()
        let asked = ContinuousClock.now
        let outcome = Outcome<T>()
        do {
            let work = Task {
                @Sendable func run(_ connection: PostgresConnection) async throws -> T {
                    lease.connection.withLock { $0 = connection }
                    lease.isLent.store(true, ordering: .sequentiallyConsistent)
                    pool?.lent(after: ContinuousClock.now - asked)
                    defer { pool?.returned() }
                    return try await body(connection)
                }
                do {
                    if let keeping, let connection = keeping.take() {
                        let value: T
                        do {
                            value = try await run(connection)
                        } catch {
                            keeping.release(connection)
                            throw error
                        }
                        // Free before the caller goes on: its next read finds it.
                        keeping.release(connection)
                        outcome.resolve(.success(value))
                    } else {
                        try await client.withConnection { connection in
                            let value = try await run(connection)
                            let keeps = keeping?.adopt(connection) ?? false
                            outcome.resolve(.success(value))
                            if keeps, let keeping { await keeping.hold(connection) }
                        }
                    }
                } catch {
                    outcome.resolve(.failure(error))
                }
            }
            let watched = CallWatch.shared.watch(
                CallWatch.Call(
                    asked: asked, timeout: timeout, answerWithin: answerWithin, abandonable: abandonable,
                    address: address, lease: lease
                ) { verdict in
                    outcome.resolve(.failure(verdict))
                    work.cancel()
                })
            defer { CallWatch.shared.end(watched) }
            let result: Result<T, any Error>
            do {
                result = .success(
                    try await withTaskCancellationHandler {
                        try await outcome.value()
                    } onCancel: {
                        work.cancel()
                    })
            } catch {
                result = .failure(error)
            }
            // `body` may borrow its caller's closure (`withoutActuallyEscaping`): it ends first.
            if !abandonable { await work.value }
            return try result.get()
        } catch {
            // A cancelled caller is told so, not that the server could not be reached.
            if Task.isCancelled, !(error is DepotError) { throw CancellationError() }
            // Before a connection is in hand every failure is about reaching the server; after,
            // the body's own errors pass through and PostgreSQL's are named.
            if !lease.isLent.load(ordering: .sequentiallyConsistent), !(error is DepotError),
                !(error is CancellationError), !(error is PSQLError)
            {
                throw DepotError(
                    .connection, "PostgreSQL at \(address) could not be reached: \(error)", underlying: error)
            }
            throw PostgresErrors.map(error, address: address)
        }
    }

    // MARK: - What Depot installs

    /// Makes sure the configured schema and Depot's functions of this version are in place, once
    /// per store: a read-only look at the catalog (`PostgresDialect.setupCheck`), and
    /// `PostgresDialect.setup(schema:)` only when something is missing or outdated. A database
    /// Depot has set up is never written to by this, so a read-only role or a replica can read it.
    ///
    /// - Throws: `DepotError` of kind `.storage` naming the functions and the schema when they are
    ///   missing or outdated and this role may not create them (or the server is read-only);
    ///   `.connection` when the server cannot be reached.
    public func prepare() async throws {
        if isPrepared.withLock({ $0 }) { return }
        try await prepareLock.lock()
        defer { prepareLock.unlock() }
        if isPrepared.withLock({ $0 }) { return }
        let ready = try await withPrimaryReader { connection in
            try await connection.count(PostgresDialect.setupCheck) == PostgresDialect.setupFunctionCount
        }
        if !ready {
            logging.logger.info(
                "installing Depot's functions (missing or of another version)",
                metadata: ["schema": "\(configuration.schema ?? "current")"])
            let setup = PostgresDialect.setup(schema: configuration.schema)
            let renderer = SQLRenderer(dialect: .postgres)
            let schema = configuration.schema
            try await withWriter { connection in
                try await connection.execute(renderer.begin)
                do {
                    for statement in setup { try await connection.execute(statement) }
                    try await connection.execute(renderer.commit)
                } catch {
                    _ = try? await connection.execute(renderer.rollback)
                    guard let failure = error as? DepotError, failure.kind == .storage else { throw error }
                    throw DepotError(
                        .storage,
                        "Depot's functions (\(SQLFunctions.fold), \(SQLFunctions.distance), "
                            + "\(SQLFunctions.announceCommit)) are missing or outdated in "
                            + (schema.map { "schema '\($0)'" } ?? "the current schema")
                            + " and could not be installed (\(failure.message)); "
                            + "open the store once with a role that may create functions there", underlying: error)
                }
            }
        }
        isPrepared.withLock { $0 = true }
    }

    /// Forgets that the schema and functions are in place (after the schema was dropped).
    func unprepare() {
        isPrepared.withLock { $0 = false }
    }

    /// Names this store as the transaction's writer, so the announcements its writes cause are
    /// recognised (and skipped) by this store's listener.
    public func transactionBegan(on connection: PostgresEngineConnection) async throws {
        try await connection.execute(PostgresDialect.markWriter(identity))
    }

    /// Gives `table` the trigger that announces its commits (`PostgresDialect.announceTrigger(for:)`).
    ///
    /// A table whose text columns lack Depot's byte collation (made by an earlier version, or by
    /// hand) gets a notice naming them, once per store: its answers are the same, but Depot's
    /// comparisons (`COLLATE "C"`) cannot use those columns' indexes.
    public func adopt(_ table: TableDescription, on connection: PostgresEngineConnection) async throws {
        try await connection.execute(PostgresDialect.announceTrigger(for: table.name))
        guard table.columns.contains(where: { $0.type == .text || $0.type == .url }),
            !noticedCollations.withLock({ $0.contains(table.name) })
        else { return }
        let plain = try await connection.texts(PostgresDialect.textColumnsWithoutByteCollation(of: table.name))
            .compactMap { $0.first ?? nil }
        guard !plain.isEmpty, noticedCollations.withLock({ $0.insert(table.name).inserted }) else { return }
        let message =
            "table \(table.name): text columns \(plain.joined(separator: ", ")) have the database's default collation; "
            + "Depot compares text by bytes (COLLATE \"C\"), which their indexes cannot serve, so lookups scan. "
            + "Give them the collation in a migration step: ALTER TABLE \"\(table.name)\" ALTER COLUMN … "
            + "TYPE text COLLATE \"C\""
        logging.logger.notice(
            "\(message)", metadata: ["table": "\(table.name)", "columns": "\(plain.joined(separator: ","))"])
    }

    /// The tables whose text columns' collation the log has been told of.
    private let noticedCollations = Mutex(Set<String>())

    /// Always `false`: PostgreSQL reads see tables as soon as they are committed.
    public func isMissingTable(_ error: any Error, _ table: TableDescription) -> Bool { false }

    // MARK: - Commits of others

    /// Listens on `SQLFunctions.commitChannel` while anyone subscribes to `broadcaster`, and
    /// publishes the commits other stores and other sessions make to this store's schema.
    ///
    /// The listener has a connection of its own, outside the pool (a pool of one still serves
    /// every other call), opened when the first subscriber comes and closed when the last one
    /// leaves. Whenever its `LISTEN` comes into force — the first time (the listener connects
    /// after the first observer has read its query), after a lost connection, or for observers
    /// that came back after everyone had stopped — it publishes `StoreCommit.anythingMayHaveChanged`,
    /// so every observer reads its query again once: commits made while nobody listened are not
    /// missed.
    public func watchExternalCommits(_ broadcaster: CommitBroadcaster) {
        broadcaster.whenIdle { [weak self, weak broadcaster] in
            guard let self, let broadcaster else { return }
            self.stopWatching(broadcaster)
        }
        listener.withLock { task in
            guard task == nil else { return }
            guard case .success(let listenerConfiguration) = configuration.listenerConfiguration else { return }
            // Named, so an operator (or a test) can tell it in pg_stat_activity.
            let settings = Self.clientSettings(listenerConfiguration, connections: 1, applicationName: listenerName)
            let address = listenerConfiguration.address
            let parts = ListenerParts(
                identity: identity, schema: configuration.schema, broadcaster: broadcaster, state: listening,
                logger: configuration.logging.logger,
                probe: { [weak self] payload in
                    guard let self else { return }
                    try await self.withConnection { connection in
                        _ = try await connection.query(
                            PostgresQuery(
                                unsafeSQL: "SELECT pg_notify($1, $2)",
                                binds: {
                                    var binds = PostgresBindings()
                                    binds.append(SQLFunctions.commitChannel)
                                    binds.append(payload)
                                    return binds
                                }()), logger: PostgresOperations.logger
                        ).collect()
                    }
                },
                unheard: "commits of other processes do not reach this store's commit listener: a notification "
                    + "sent through the store's pool was not heard on its listening connection (\(address)) "
                    + "within \(configuration.listenerProbeTimeout). Behind a transaction-mode pooler such as PgBouncer, `LISTEN` does not "
                    + "hold: set PostgresStore.Configuration.listenerURL to the server's own address. Until then "
                    + "observers see this store's own commits only",
                probeTimeout: configuration.listenerProbeTimeout)
            task = Task {
                let client = PostgresClient(configuration: settings, backgroundLogger: PostgresOperations.logger)
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await client.run() }
                    // While the server is away the listener tries every 200 ms; the log hears of it
                    // once a minute at most.
                    var failures = 0
                    var noticed: ContinuousClock.Instant?
                    while !Task.isCancelled {
                        do {
                            try await Self.listen(parts, on: client)
                        } catch  where !Task.isCancelled {
                            failures += 1
                            if noticed.map({ ContinuousClock.now - $0 >= .seconds(60) }) ?? true {
                                noticed = ContinuousClock.now
                                parts.logger.notice(
                                    "the commit listener lost its connection; it starts again",
                                    metadata: ["error": "\(String(reflecting: error))", "failures": "\(failures)"])
                            }
                        } catch {}
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                    group.cancelAll()
                }
            }
        }
    }

    /// Stops listening when nobody subscribes any more (the broadcaster's last subscriber left);
    /// the listener's connection closes with it.
    private func stopWatching(_ broadcaster: CommitBroadcaster) {
        listener.withLock { task in
            guard broadcaster.subscriberCount == 0 else { return }
            task?.cancel()
            task = nil
        }
    }

    /// A client's settings for `configuration`'s server: at most `connections` connections (at
    /// least one), its connect timeout, its schema first on the search path.
    private static func clientSettings(
        _ configuration: Configuration, connections: Int, applicationName: String? = nil
    ) -> PostgresClient.Configuration {
        var settings = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: configuration.tls)
        settings.options.maximumConnections = max(1, connections)
        settings.options.connectTimeout = configuration.connectTimeout
        // PostgresNIO's pool arms timers for each connection it takes back: a keep-alive ping, and
        // an idle timeout for connections beyond its minimum. Each is a task and wake-ups in the
        // pool's run loop (`depot-bench --only "pg find by key"`). Connections ping only when
        // asked to. The minimum stays 0 (its idle timer stays): a kept connection would retry
        // through an outage with nobody calling, until PostgresNIO's circuit breaker (60 s, not
        // configurable) failed every call at once, for up to its 60 s backoff after the server
        // is back; and it would be open forever, where NATs drop quiet flows.
        settings.options.keepAliveBehavior = configuration.keepAliveInterval.flatMap { $0 > .zero ? $0 : nil }.map {
            PostgresClient.Configuration.Options.KeepAliveBehavior(frequency: $0)
        }
        if let applicationName {
            settings.options.additionalStartupParameters.append(("application_name", applicationName))
        }
        if let schema = configuration.schema {
            settings.options.additionalStartupParameters.append(("search_path", PostgresDialect().quote(schema)))
        }
        return settings
    }

    /// The listener connection's `application_name`.
    var listenerName: String { "depot listener \(identity.prefix(8))" }

    /// Whether the listener runs (it does while anyone observes).
    var isWatching: Bool { listener.withLock { $0 != nil } }

    private struct ListenerParts: Sendable {
        let identity: String
        /// The configured schema; `nil`: the connection's current one.
        let schema: String?
        let broadcaster: CommitBroadcaster
        let state: ListeningState
        let logger: Logger
        /// Sends a notification with a payload through the store's pool.
        let probe: @Sendable (String) async throws -> Void
        /// What the log says when the probe is not heard.
        let unheard: String
        /// How long to wait for the probe.
        let probeTimeout: Duration

        /// The writer field of this store's probes (other stores see a commit of no table).
        var probeWriter: String { "probe " + identity }
    }

    /// Listens on the channel until the connection is lost, publishing other stores' commits to
    /// this store's schema.
    private static func listen(_ parts: ListenerParts, on client: PostgresClient) async throws {
        try await client.withConnection { connection in
            // The schema whose commits count: the configured one, else the connection's current one
            // (none when no schema on the search path exists: then nothing can be announced).
            var schema = parts.schema ?? ""
            if parts.schema == nil {
                let rows = try await connection.query(
                    PostgresOperations.query(PostgresDialect.currentSchemaQuery), logger: PostgresOperations.logger)
                for try await name in rows.decode(String?.self) { schema = name ?? "" }
            }
            try await connection.listen(on: SQLFunctions.commitChannel) { notifications in
                defer { parts.state.ended() }
                // Commits made before the LISTEN came into force were not heard: those between an
                // observer's first read and the first LISTEN (the listener connects after the
                // first subscriber came), and, for later LISTENs, those made while the connection
                // was lost or nobody observed. Every observer reads its query again once (an
                // unchanged result is not delivered again).
                // Published before the state says it listens: whoever waited for that and
                // observes afterwards reads after this notice, not before it.
                parts.broadcaster.publish(.anythingMayHaveChanged)
                if parts.state.began() {
                    parts.logger.notice("the commit listener listens again; every observer reads its query again once")
                }
                // Whether what is sent through the pool reaches this connection: not through a
                // transaction-mode pooler, which hands the session that ran LISTEN to other clients.
                let separator = String(SQLFunctions.payloadSeparator)
                let payload = schema + separator + parts.probeWriter + separator
                let probe = Task {
                    do {
                        try await parts.probe(payload)
                        try await Task.sleep(for: parts.probeTimeout)
                    } catch {
                        return
                    }
                    if parts.state.probeUnheard() { parts.logger.error("\(parts.unheard)") }
                }
                defer { probe.cancel() }
                for try await notification in notifications {
                    // schema, writing store (empty outside Depot), table: commits to this schema
                    // by anyone but this store.
                    let fields = notification.payload.split(
                        separator: SQLFunctions.payloadSeparator, maxSplits: 2, omittingEmptySubsequences: false)
                    guard fields.count == 3, fields[0] == schema, fields[1] != parts.identity else { continue }
                    if fields[1] == parts.probeWriter {
                        parts.state.probeHeard()
                        probe.cancel()
                        continue
                    }
                    guard !fields[2].isEmpty else { continue }  // another store's probe
                    parts.broadcaster.publish(StoreCommit(tables: [String(fields[2])]))
                }
            }
        }
    }

    /// Whether the listener heard a notification sent through the store's pool (`nil`: not yet,
    /// and not given up).
    var isHearingOthers: Bool? { listening.isHearingOthers }

    /// Waits until commits of other stores are being received (the listener's `LISTEN` is in
    /// force), for at most `timeout`; returns whether they are.
    func waitUntilListening(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if listening.isListening { return true }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }  // cancelled: do not spin
        }
        return false
    }
}

/// A store's listeners: how many have their `LISTEN` in force (an old one may still be ending
/// while its successor starts), and whether one ever had.
final class ListeningState: Sendable {
    private let state = Mutex((listening: 0, listenedBefore: false))

    /// Whether a `LISTEN` is in force.
    var isListening: Bool { state.withLock { $0.listening > 0 } }

    /// A `LISTEN` came into force; returns whether one had before.
    func began() -> Bool {
        state.withLock { state in
            state.listening += 1
            defer { state.listenedBefore = true }
            return state.listenedBefore
        }
    }

    /// A `LISTEN` ended.
    func ended() {
        state.withLock { $0.listening -= 1 }
    }

    private let heard = Mutex<Bool?>(nil)

    /// Whether the listener heard a notification sent through the store's pool: `nil` until it
    /// did, or gave up waiting.
    var isHearingOthers: Bool? { heard.withLock { $0 } }

    /// The listener heard its probe.
    func probeHeard() { heard.withLock { $0 = true } }

    /// The listener waited in vain for its probe; returns whether it had never heard one (then
    /// the log hears of it).
    func probeUnheard() -> Bool {
        heard.withLock { heard in
            guard heard != true else { return false }
            defer { heard = false }
            return heard == nil
        }
    }
}

/// The pool's metrics: `depot_pool_connections_in_use` and `depot_pool_wait_seconds` (see
/// `SQLMetrics`).
final class PoolMeters: Sendable {
    private let inUse = Atomic(0)
    private let gauge: Gauge?
    private let wait: CoreMetrics.Timer?

    init(_ metrics: SQLMetrics) {
        let dimensions = [("system", "postgresql")] + metrics.dimensions
        gauge =
            metrics.isEnabled
            ? Gauge(label: "depot_pool_connections_in_use", dimensions: dimensions, factory: metrics.factory) : nil
        wait =
            metrics.isEnabled
            ? CoreMetrics.Timer(label: "depot_pool_wait_seconds", dimensions: dimensions, factory: metrics.factory)
            : nil
    }

    /// A connection was lent after `waiting`.
    func lent(after waiting: Duration) {
        guard let gauge, let wait else { return }
        gauge.record(inUse.add(1, ordering: .relaxed).newValue)
        wait.record(duration: waiting)
    }

    /// A lent connection came back.
    func returned() {
        guard let gauge else { return }
        gauge.record(inUse.subtract(1, ordering: .relaxed).newValue)
    }
}

/// Why a call failed with a `.connection` error: its pool lent no connection within the connect
/// timeout (the server is down, or every connection is busy).
struct NoConnectionInTime: Error {}

/// The calls in flight on PostgreSQL pools, looked at by one task every
/// ``PostgresEngine/closeCheck`` (sooner when a call's deadline comes first) while there are any
/// (``PostgresEngine/leased(client:address:timeout:pool:answerWithin:abandonable:_:)``): a task and
/// a timer per call cost each call about as much as its statement's own work in Depot.
final class CallWatch: Sendable {
    /// One call as the watch sees it.
    struct Call: Sendable {
        let asked: ContinuousClock.Instant
        /// How long the call may wait for a connection.
        let timeout: Duration
        /// How long the whole call may take, if it is bounded.
        let answerWithin: Duration?
        /// Whether the call may be left behind when its connection closes under it.
        let abandonable: Bool
        let address: String
        let lease: Lease
        /// Ends the call with the watch's verdict.
        let fail: @Sendable (DepotError) -> Void
        /// How many looks in a row found its connection closed.
        var closedChecks = 0
    }

    private struct State {
        var calls: [UInt64: Call] = [:]
        var next: UInt64 = 0
        var isLooking = false
    }
    private let state = Mutex(State())

    /// The watch every pool's calls share.
    static let shared = CallWatch()

    /// Starts watching `call`; returns what ``end(_:)`` takes.
    func watch(_ call: Call) -> UInt64 {
        let (id, start) = state.withLock { state in
            state.next += 1
            state.calls[state.next] = call
            defer { state.isLooking = true }
            return (state.next, !state.isLooking)
        }
        if start { Task.detached { await self.look() } }
        return id
    }

    /// Stops watching a call (it ended).
    func end(_ id: UInt64) {
        _ = state.withLock { $0.calls.removeValue(forKey: id) }
    }

    /// Looks at the calls in flight until there are none.
    private func look() async {
        while true {
            let wake = state.withLock { state -> ContinuousClock.Instant? in
                guard !state.calls.isEmpty else {
                    state.isLooking = false
                    return nil
                }
                var wake = ContinuousClock.now + PostgresEngine.closeCheck
                for call in state.calls.values {
                    if !call.lease.isLent.load(ordering: .sequentiallyConsistent) {
                        wake = min(wake, call.asked + call.timeout)
                    }
                    if let answerWithin = call.answerWithin { wake = min(wake, call.asked + answerWithin) }
                }
                return wake
            }
            guard let wake else { return }
            try? await Task.sleep(until: wake)
            let verdicts = state.withLock { state -> [(Call, DepotError)] in
                let now = ContinuousClock.now
                var verdicts: [(Call, DepotError)] = []
                for (id, var call) in state.calls {
                    switch Self.verdict(on: &call, at: now) {
                    case .watching: state.calls[id] = call
                    case .done: state.calls[id] = nil
                    case .failed(let error):
                        state.calls[id] = nil
                        verdicts.append((call, error))
                    }
                }
                return verdicts
            }
            for (call, error) in verdicts { call.fail(error) }
        }
    }

    private enum Verdict {
        case watching, done
        case failed(DepotError)
    }

    /// What a look at `call` at `now` finds.
    private static func verdict(on call: inout Call, at now: ContinuousClock.Instant) -> Verdict {
        if !call.lease.isLent.load(ordering: .sequentiallyConsistent) {
            guard now >= call.asked + call.timeout else { return .watching }
            return .failed(
                DepotError(
                    .connection,
                    "no connection to PostgreSQL at \(call.address) within \(call.timeout) (server down?)",
                    underlying: NoConnectionInTime()))
        }
        if let answerWithin = call.answerWithin, now >= call.asked + answerWithin {
            return .failed(
                DepotError(.connection, "no answer from PostgreSQL at \(call.address) within \(answerWithin)"))
        }
        if call.abandonable {
            let isClosed = call.lease.connection.withLock { $0?.isClosed == true }
            call.closedChecks = isClosed ? call.closedChecks + 1 : 0
            guard call.closedChecks >= 2 else { return .watching }
            return .failed(
                DepotError(
                    .connection,
                    "lost the connection to PostgreSQL at \(call.address): it closed, and the call in flight was "
                        + "not answered"))
        }
        // Lent, with nothing left to watch but a bound on the whole call.
        return call.answerWithin == nil ? .done : .watching
    }
}

/// One pooled connection kept for reads while they keep coming
/// (``PostgresEngine/leased(client:address:timeout:pool:answerWithin:abandonable:keeping:_:)``): a
/// read that finds it free runs on it without a lease from PostgresNIO's pool, whose lease and
/// return cost a call about 0.1 ms (`depot-bench --only "pg find by key"`: a pool against one
/// connection). It goes back to the pool after ``idle`` without a read, when it closes, or when the
/// store closes; so nothing keeps a connection open, or reconnects, while nobody reads.
final class KeptReader: Sendable {
    /// How long the connection is kept without a read.
    let idle: Duration

    init(idle: Duration) {
        self.idle = idle
    }

    private struct State {
        var connection: PostgresConnection?
        var isBusy = false
        var lastUsed = ContinuousClock.now
        var isClosing = false
        /// The holders waiting for their next look (two, briefly, when a closed connection's
        /// holder has not seen yet that another took its place).
        var bells: [CheckedContinuation<Void, Never>] = []
        /// Whether the bell rang while nobody waited.
        var rung = false
        /// Who waits in ``close()`` for the connection to go back.
        var closers: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// The connection kept now, if any.
    var connection: PostgresConnection? { state.withLock { $0.connection } }

    /// The kept connection, now busy, if there is one and it is free and open.
    func take() -> PostgresConnection? {
        state.withLock { state in
            guard let connection = state.connection, !state.isBusy, !connection.isClosed else { return nil }
            state.isBusy = true
            return connection
        }
    }

    /// Frees `connection` for the next read, if it is still the kept one.
    func release(_ connection: PostgresConnection) {
        state.withLock { state in
            guard state.connection === connection else { return }
            state.isBusy = false
            state.lastUsed = ContinuousClock.now
        }
    }

    /// Whether `connection`, just lent by the pool for a read, is now the kept one (when none is,
    /// or the kept one closed): the caller then ``hold(_:)``s it.
    func adopt(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard state.connection?.isClosed ?? true, !state.isClosing, !connection.isClosed else { return false }
            state.connection = connection
            state.isBusy = false
            state.lastUsed = ContinuousClock.now
            return true
        }
    }

    /// Keeps the adopted `connection` from its pool until ``idle`` passes without a read, it
    /// closes, its task is cancelled, or ``close()``; looks four times a second.
    func hold(_ connection: PostgresConnection) async {
        while true {
            let tick = Task {
                do {
                    try await Task.sleep(for: .milliseconds(250))
                    ring()
                } catch {}
            }
            await withCheckedContinuation { (bell: CheckedContinuation<Void, Never>) in
                let rung = state.withLock { state in
                    defer { state.rung = false }
                    if !state.rung { state.bells.append(bell) }
                    return state.rung
                }
                if rung { bell.resume() }
            }
            tick.cancel()
            let isCancelled = Task.isCancelled
            let closers = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                // Closed, and another read's connection kept instead.
                guard state.connection === connection else { return [] }
                let isIdle = !state.isBusy && ContinuousClock.now - state.lastUsed >= idle
                // A closed connection goes back even while a read is on it: that read fails, or
                // is left behind by its watch.
                guard isIdle || isCancelled || state.isClosing || connection.isClosed else { return nil }
                state.connection = nil
                state.isBusy = false
                defer { state.closers = [] }
                return state.closers
            }
            if let closers {
                for closer in closers { closer.resume() }
                return
            }
        }
    }

    /// Wakes the holders for a look.
    private func ring() {
        let bells = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.bells.isEmpty { state.rung = true }
            defer { state.bells = [] }
            return state.bells
        }
        for bell in bells { bell.resume() }
    }

    /// Gives the kept connection back to its pool, and keeps none after.
    func close() async {
        guard
            (state.withLock { state in
                state.isClosing = true
                return state.connection != nil
            })
        else { return }
        ring()
        await withCheckedContinuation { (closer: CheckedContinuation<Void, Never>) in
            let isBack = state.withLock { state in
                if state.connection != nil { state.closers.append(closer) }
                return state.connection == nil
            }
            if isBack { closer.resume() }
        }
    }
}

/// A call's connection, as its watch sees it (``PostgresEngine/leased``).
final class Lease: Sendable {
    /// Set once a pooled connection is in hand (the connect timeout no longer applies).
    let isLent = Atomic(false)
    /// The connection lent, once it is: the watch looks whether it closed.
    let connection = Mutex<PostgresConnection?>(nil)
}

/// The first of a call's own end and its watch's verdict (``PostgresEngine/leased``).
final class Outcome<T: Sendable>: Sendable {
    private struct State {
        var result: Result<T, any Error>?
        var waiter: CheckedContinuation<T, any Error>?
    }
    private let state = Mutex(State())

    /// Settles the outcome, unless it is settled.
    func resolve(_ result: Result<T, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    /// Waits for the outcome.
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let settled = state.withLock { state -> Result<T, any Error>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}
