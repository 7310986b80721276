import Depot
@_exported import DepotSQL
import Foundation
import PostgresNIO

/// Depot on a PostgreSQL server, through PostgresNIO's connection pool.
///
/// The same entities, queries and repositories as on `InMemoryStore` or `SQLiteStore`, with the
/// same answers (the DepotTesting conformance suite runs unchanged on every store):
///
/// ```swift
/// let store = try PostgresStore(url: "postgres://app:secret@127.0.0.1:5432/app")
/// let airports = store.repository(Airport.self)
/// try await airports.upsert(list)
/// let norwegian = try await airports.fetch(where: \.country == "NO", orderBy: [.ascending(\.name)])
/// ```
///
/// Tables are created on first use with native types (`boolean`, `bigint`, `double precision`,
/// `numeric`, `text`, `bytea`, `timestamptz`, `uuid`, `jsonb`) and checked against the entity
/// when they exist. Text compares by code point (`COLLATE "C"`), as on every store.
/// Case-insensitive matching folds in the server, with the function `depot_fold` that Depot
/// installs, built from the same Unicode table as `TextFolding.fold(_:)`: rows written by any
/// client (psql, another service) match exactly as on the other stores.
///
/// Depot installs its functions (`depot_fold`, `depot_distance`, `depot_announce_commit`) when the
/// store is first used and they are missing or outdated; otherwise reads never write, so a
/// read-only role or a replica can read a database Depot has set up. A role that may not create
/// them where they are missing gets an error that says so.
///
/// Writes of 500 rows or more stream through `COPY … FROM STDIN` (upserts and updates through a
/// temporary table, where the role may create one); smaller batches bind one array per column
/// (`INSERT … SELECT * FROM UNNEST(…)`). Transactions run on one pooled connection; a store serializes its
/// own transactions, as every Depot store does. Commits are announced to observers of this store
/// and, through `LISTEN`/`NOTIFY`, to other stores on the same database: every Depot table carries
/// a statement-level trigger (`depot_commits`) that announces its changes when they commit, so
/// writes by other processes and by plain SQL sessions (`psql`) reach observers too.
///
/// `PostgresStore` is `SQLStore` on ``PostgresEngine``: reads, transactions, table checks and
/// migrations are the same code as `SQLiteStore`'s.
public typealias PostgresStore = SQLStore<PostgresEngine>

extension SQLStore where Engine == PostgresEngine {
    /// Where and how to connect (``PostgresEngine/Configuration``).
    public typealias Configuration = PostgresEngine.Configuration

    /// Connects to the server `configuration` names. Connections open on first use; an
    /// unreachable server surfaces as a `.connection` error from the first operation.
    public convenience init(configuration: Configuration) {
        self.init(engine: PostgresEngine(configuration: configuration))
    }

    /// Connects to the server a `postgres://user:password@host:port/database` URL names.
    ///
    /// - Throws: `DepotError` of kind `.connection` naming what is missing or malformed.
    public convenience init(url: String) throws {
        self.init(configuration: try Configuration(url: url))
    }

    /// The configuration the store connects with.
    public var configuration: Configuration { engine.configuration }

    /// Closes the pool's connections. Later operations fail.
    public func close() async {
        await engine.close()
    }

    /// Drops the configured ``PostgresEngine/Configuration/schema`` and every table in it: for
    /// tests and scratch schemas.
    ///
    /// ```sql
    /// DROP SCHEMA IF EXISTS "scratch" CASCADE
    /// ```
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when no schema is configured (Depot never
    ///   drops the server's default schema).
    public func dropSchema() async throws {
        guard let schema = configuration.schema else {
            throw DepotError(.invalidQuery, "dropSchema() needs a configured schema; none is set")
        }
        _ = try await engine.withWriter { connection in
            try await connection.execute(PostgresDialect.dropSchema(schema))
        }
        schemaChanged()
        engine.unprepare()
    }

    /// Waits until commits of other stores are being received (the listener's `LISTEN` is in
    /// force), for at most `timeout`; returns whether they are.
    package func waitUntilListening(timeout: Duration = .seconds(90)) async -> Bool {
        await engine.waitUntilListening(timeout: timeout)
    }

    /// Whether the commit listener heard a notification sent through the store's pool: `true`
    /// once it did, `false` after 30 seconds without (a transaction-mode pooler in between: see
    /// ``Configuration/listenerURL``), `nil` before either (or while nobody observes).
    package var isHearingOthers: Bool? { engine.isHearingOthers }

    /// What the last check found of each replica (``PostgresEngine/Configuration/replicaURLs``, in
    /// order): `unchecked`, `serving`, `lagging` or `unavailable`.
    package var replicaStates: [String] {
        (engine.routing?.replicas ?? []).map { replica in
            switch replica.state.withLock({ $0.status }) {
            case .unchecked: "unchecked"
            case .serving: "serving"
            case .lagging: "lagging"
            case .unavailable: "unavailable"
            }
        }
    }
}

extension PostgresStore: CommitListening {}
