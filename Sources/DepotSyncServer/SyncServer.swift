import CoreMetrics
import Depot
import DepotSync
import Foundation
import Logging

/// The server half of DepotSync: serves a change feed and a push endpoint for each declared
/// table, from any Depot store, speaking DepotSync's `SyncProtocol` (so clients declare
/// `.entity(Note.self, server: "/sync")` and write nothing else).
///
/// ```swift
/// struct User: SyncCaller { var id: String }
///
/// let sync = try await SyncServer<User>.open(store: store, tables: [
///     .table(Note.self,
///            scope: { user in \.ownerID == user.id },
///            authorize: { write, user in write.row.ownerID == user.id })
/// ])
/// try await sync.store.repository(Note.self).insert(note)   // the app's own writes: logged too
/// router.addRoutes(sync.routes(caller: authenticate), atPath: "/sync")   // DepotSyncHummingbird
/// ```
///
/// What it guarantees:
/// - **A log ordered by commit.** Every write to a served table through ``store`` (pushes and the
///   app's own) appends to `depot_sync_log` in its transaction. Before it reads the rows it will
///   change, a write takes the log's head row and keeps its lock until it commits, so no cursor
///   passes a change that commits later, with any number of writers and server processes on one
///   database (PostgreSQL's default `READ COMMITTED` isolation assumed). Writes that bypass
///   ``store`` (``base``, another program) are not in the log.
/// - **Scopes.** A caller receives the rows its scope admits; a row deleted, or moved out of the
///   scope by a logged write, reaches it as a deletion, when the row as it was could have been in
///   the scope. Pushes reach only rows inside the scope and must leave them there; a row outside
///   it is answered as an absent one.
/// - **Secure by default.** A table without an `authorize` hook takes no pushes.
/// - **Idempotent pushes.** A push's `Idempotency-Key` is kept per caller with a fingerprint of
///   the request when the push wrote: the same request again gets the stored answer, another
///   request under the key gets 422. Keys are pruned with the log.
/// - **Conflicts** are found by comparing the push's base with the server's row (every changed
///   column; every column for a delete; a missing base counts as stale), and answered 409 with
///   the row and its field times, or resolved by the table's policy on the server.
/// - **Server field times.** A column's time is the push's edit time capped at the server's clock
///   (the app's own writes: the clock's), and always later than the time the column had.
public final class SyncServer<Caller: SyncCaller>: Sendable {
    /// Limits and housekeeping.
    public struct Configuration: Sendable {
        /// Log entries kept: a client whose cursor is older copies in full again.
        public var logLength: Int
        /// Rows per feed page when the client names no limit.
        public var defaultPageSize: Int
        /// The largest page a client may ask for.
        public var maximumPageSize: Int
        /// The largest push body, in bytes.
        public var maximumBodyBytes: Int
        /// The longest text a pushed value may hold, in Unicode scalars (what storage pays for).
        public var maximumTextScalars: Int
        /// The largest blob a pushed value may hold, in bytes.
        public var maximumBlobBytes: Int
        /// The clock field times come from.
        public var clock: @Sendable () -> Date
        /// Where pushes refused and conflicts are logged.
        public var logger: Logger

        /// Limits suited to most apps; each can be changed.
        public init(
            logLength: Int = 100_000, defaultPageSize: Int = 1_000, maximumPageSize: Int = 10_000,
            maximumBodyBytes: Int = 1 << 20, maximumTextScalars: Int = 100_000, maximumBlobBytes: Int = 1 << 20,
            clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "depot.sync.server")
        ) {
            self.logLength = logLength
            self.defaultPageSize = defaultPageSize
            self.maximumPageSize = maximumPageSize
            self.maximumBodyBytes = maximumBodyBytes
            self.maximumTextScalars = maximumTextScalars
            self.maximumBlobBytes = maximumBlobBytes
            self.clock = clock
            self.logger = logger
        }
    }

    /// The store to write through: writes to served tables are logged for the feeds.
    public let store: any Store
    /// The store underneath: writes through it are not logged (clients will not see them).
    public let base: any Store
    /// The limits this server keeps.
    public let configuration: Configuration
    let tables: [String: any ServedTable<Caller>]
    let clock: HybridClock

    private init(base: any Store, tables: [SyncTable<Caller>], configuration: Configuration) throws {
        var byName: [String: any ServedTable<Caller>] = [:]
        for table in tables {
            guard byName.updateValue(table.box, forKey: table.name) == nil else {
                throw DepotError(.invalidSchema, "the sync server serves \(table.name) twice", table: table.name)
            }
        }
        guard configuration.logLength > 0, configuration.defaultPageSize > 0,
            configuration.maximumPageSize >= configuration.defaultPageSize
        else {
            throw DepotError(
                .invalidSchema,
                "a sync server needs a log length and page sizes above 0 (the default within the maximum)")
        }
        let clock = HybridClock(configuration.clock)
        self.base = base
        self.tables = byName
        self.clock = clock
        self.configuration = configuration
        self.store = LoggedStore(
            base: base, log: ChangeLog(served: Set(byName.keys), clock: clock, logLength: configuration.logLength))
    }

    /// A server for `tables` over `store`, its log ready (tables created, head row written).
    ///
    /// - Throws: `DepotError` of kind `.invalidSchema` when a table is declared twice or the
    ///   configuration's sizes are not positive; what the store throws.
    public static func open(
        store: any Store, tables: [SyncTable<Caller>], configuration: Configuration = Configuration()
    ) async throws -> SyncServer {
        let server = try SyncServer(base: store, tables: tables, configuration: configuration)
        try await store.write { tx in
            let heads = tx.repository(SyncHead.self)
            guard try await heads.find(SyncHead.only) == nil else { return }
            do {
                try await heads.insert(SyncHead(id: SyncHead.only, head: 0, pruned: 0, epoch: UUID().uuidString))
            } catch let error as DepotError where error.kind == .constraintViolation {
                // Another process opened the same database first: its head (and epoch) stand.
            }
        }
        return server
    }

    /// Where the log stands: its epoch (a new one makes every cursor expire) and the sequence
    /// number of the newest change (0 before any).
    public struct LogPosition: Sendable, Equatable {
        /// The log's epoch.
        public var epoch: String
        /// The newest change's sequence number.
        public var sequence: Int
    }

    /// Where the log stands now.
    ///
    /// - Throws: `DepotError` of kind `.storage` when the log has no head row (the store was not
    ///   opened with ``open(store:tables:configuration:)``); what the store throws.
    public func logPosition() async throws -> LogPosition {
        guard let head = try await base.repository(SyncHead.self).find(SyncHead.only) else {
            throw DepotError(
                .storage, "the sync log has no head row: open the store with SyncServer.open",
                table: SyncHead.schema.tableName)
        }
        return LogPosition(epoch: head.epoch, sequence: head.head)
    }

    /// Forgets the log, the idempotency keys and the field times, and starts a new epoch: every
    /// client's next pull copies in full (after an import that replaced the data, say).
    public func resetLog() async throws {
        try await base.write { tx in try await Self.resetLog(in: tx) }
    }

    /// ``resetLog()`` inside a transaction of the store (an import that replaces the data in the
    /// same transaction, no server open): also creates the log's head row when the store has none.
    public static func resetLog(in tx: Transaction) async throws {
        let heads = tx.repository(SyncHead.self)
        if try await heads.find(SyncHead.only) == nil {
            try await heads.upsert(SyncHead(id: SyncHead.only, head: 0, pruned: 0, epoch: UUID().uuidString))
        }
        let head = try await ChangeLog.take(0, in: tx)
        _ = try await tx.repository(SyncLogEntry.self).removeAll()
        _ = try await tx.repository(SyncLedgerEntry.self).removeAll()
        _ = try await tx.repository(SyncFieldTimes.self).removeAll()
        try await heads.upsert(
            SyncHead(id: SyncHead.only, head: head.head, pruned: head.head, epoch: UUID().uuidString))
    }

    /// The served table `name`.
    func served(_ name: String) throws(SyncProblem) -> any ServedTable<Caller> {
        guard let table = tables[name] else { throw SyncProblem(status: 404, "no synced table '\(name)'") }
        return table
    }

    func count(_ name: String, _ dimensions: [(String, String)]) {
        Counter(label: name, dimensions: dimensions).increment()
    }
}

/// A refusal a sync route answers with: its HTTP status and a message naming what was wrong.
public struct SyncProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status (400, 401, 403, 404, 413, 422, …).
    public let status: Int
    /// What was wrong: the table, column, key, header or cursor.
    public let message: String

    /// A problem answered with `status`.
    public init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    /// "`status`: `message`".
    public var description: String { "\(status): \(message)" }
}
