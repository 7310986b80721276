import Depot
import DepotHTTP
import Foundation

/// How far a client store has synced from one API (and country).
public struct SyncCursor: Entity, Equatable {
    /// `<base URL>|<country or *>`.
    public var id: String
    /// The server's import this store holds.
    public var epoch: String
    /// The server revision this store has caught up with.
    public var revision: Int
    /// When the last sync ran.
    public var syncedAt: Date

    /// A cursor from its parts.
    public init(id: String, epoch: String, revision: Int, syncedAt: Date) {
        self.id = id
        self.epoch = epoch
        self.revision = revision
        self.syncedAt = syncedAt
    }

    /// The `sync_cursors` table, keyed by `id`.
    public static let schema = Schema<SyncCursor>("sync_cursors", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.epoch, "epoch")
        Column(\.revision, "revision")
        Column(\.syncedAt, "synced_at")
    }
}

/// `airports sync`: keeps a client store in step with the airports API, through ``AirportsAPI``
/// endpoints and ``AirportRecordMapper``.
///
/// The first sync (or one after the server imported again) pages through `GET /airports` and
/// stores every airport; later syncs ask `GET /changes` for what changed since, and persist
/// those partial records: a change that carried only `name` updates only `name`.
///
/// ```swift
/// let client = APIClient(baseURL: server)
/// let first = try await AirportsSync.run(client: client, into: store)   // .full, 28,298 airports
/// let next = try await AirportsSync.run(client: client, into: store)    // .incremental, 0 changes
/// ```
public enum AirportsSync {
    /// What a sync did.
    public struct Summary: Sendable, Equatable {
        /// `full`: every airport fetched (a first sync, or the server imported again); `incremental`: only
        /// the changes since the last sync.
        public enum Kind: String, Sendable { case full, incremental }
        /// Whether the sync was full or incremental.
        public var kind: Kind
        /// Airports (full) or changes (incremental) received.
        public var received: Int
        /// Rows removed because the server no longer lists them (full sync).
        public var removed: Int
        /// HTTP requests sent.
        public var requests: Int
        /// The server revision the store now holds.
        public var revision: Int
        /// How long the sync took, in seconds.
        public var seconds: Double
    }

    /// Syncs `store` from the API `client` talks to; with `country`, only that country's airports.
    ///
    /// Everything a sync writes commits in one transaction: a failed sync leaves the store as it was.
    ///
    /// - Parameter progress: Called after each page ("fetching", airports or changes, total
    ///   unknown) and as a full sync writes ("storing", airports, inside the transaction).
    public static func run(
        client: APIClient, into store: some Store, country: String? = nil, pageSize: Int = 5_000,
        progress: (@Sendable (WorkProgress) -> Void)? = nil
    ) async throws -> Summary {
        let clock = ContinuousClock()
        let started = clock.now
        let id = "\(client.baseURL.absoluteString)|\(country ?? "*")"
        var summary: Summary
        if let cursor = try await store.repository(SyncCursor.self).find(id),
            let incremental = try await incremental(
                client: client, store: store, cursor: cursor, country: country, progress: progress)
        {
            summary = incremental
        } else {
            summary = try await full(
                client: client, store: store, id: id, country: country, pageSize: pageSize, progress: progress)
        }
        summary.seconds = (clock.now - started).seconds
        return summary
    }

    static func full(
        client: APIClient, store: some Store, id: String, country: String?, pageSize: Int,
        progress: (@Sendable (WorkProgress) -> Void)?
    ) async throws -> Summary {
        let info = try await client.send(AirportsAPI.Dataset())
        var requests = 1
        var records: [AirportRecord] = []
        var after: String?
        while true {
            let page = try await client.send(AirportsAPI.List(country: country, after: after, limit: pageSize))
            requests += 1
            if let after, let first = page.first?.icao, !after.utf8.lexicographicallyPrecedes(first.utf8) {
                throw DepotError(
                    .mappingFailed, "GET /airports?after=\(after) answered '\(first)', not an icao after it",
                    table: Airport.schema.tableName)
            }
            records += page
            progress?(WorkProgress(phase: "fetching", done: records.count, total: nil, unit: "airports"))
            guard page.count == pageSize, let last = page.last?.icao else { break }
            after = last
        }
        // Every member must be there: a partial record cannot create an airport.
        for record in records { _ = try record.airport() }
        let scope: Filter<Airport> = country.map { \.country == $0 } ?? .all
        let keys = records.map(\.icao)
        let fetched = records
        let removed = try await store.write { tx in
            let airports = tx.repository(Airport.self)
            let removed = try await airports.remove(where: scope && !.in(\.icao, keys))
            try await WorkProgress.chunked(fetched, phase: "storing", unit: "airports", progress: progress) {
                try await airports.persist($0, mapper: AirportRecordMapper())
            }
            try await tx.repository(SyncCursor.self).upsert(
                SyncCursor(id: id, epoch: info.epoch, revision: info.revision, syncedAt: Date()))
            return removed
        }
        return Summary(
            kind: .full, received: records.count, removed: removed, requests: requests, revision: info.revision,
            seconds: 0)
    }

    /// Catches up from `cursor`; `nil` when the server's epoch changed or its change log no longer
    /// reaches back to `cursor` (a full sync is needed).
    static func incremental(
        client: APIClient, store: some Store, cursor: SyncCursor, country: String?,
        progress: (@Sendable (WorkProgress) -> Void)?
    ) async throws -> Summary? {
        var revision = cursor.revision
        var requests = 0
        var changes: [AirportRecord] = []
        var deleted = Set<String>()
        while true {
            let page = try await client.send(AirportsAPI.Changes(since: revision, country: country))
            requests += 1
            // Another import, or changes the server no longer keeps: sync in full.
            guard page.epoch == cursor.epoch, !page.pruned else { return nil }
            if page.more, page.revision <= revision {
                throw DepotError(
                    .mappingFailed, "GET /changes?since=\(revision) promised more changes but did not move forward",
                    table: Airport.schema.tableName)
            }
            // A deletion drops the changes before it; nothing follows it (a deleted airport takes no edits).
            deleted.formUnion(page.deleted)
            changes.removeAll { page.deleted.contains($0.icao) }
            changes += page.changes
            progress?(WorkProgress(phase: "fetching", done: changes.count, total: nil, unit: "changes"))
            revision = page.revision
            guard page.more else { break }
        }
        // Airports this store lacks (moved into the country): their whole record, not the change.
        let keys = Set(changes.map(\.icao))
        let present = Set(try await store.repository(Airport.self).fetch(where: .in(\.icao, keys)).map(\.icao))
        var wholes: [AirportRecord] = []
        for icao in keys.subtracting(present).sorted() {
            requests += 1
            do {
                wholes.append(try await client.send(AirportsAPI.Get(icao: icao)))
            } catch let error as HTTPError where error.kind == .notFound {
                continue
            }
        }
        let records = changes.filter { present.contains($0.icao) } + wholes
        let finalRevision = revision
        let gone = deleted
        let removed = try await store.write { tx -> Int in
            let airports = tx.repository(Airport.self)
            try await airports.persist(records, mapper: AirportRecordMapper())
            if let country {
                _ = try await airports.remove(where: .in(\.icao, keys) && \.country != country)
            }
            let removed = try await airports.remove(where: .in(\.icao, gone))
            try await tx.repository(SyncCursor.self).upsert(
                SyncCursor(id: cursor.id, epoch: cursor.epoch, revision: finalRevision, syncedAt: Date()))
            return removed
        }
        return Summary(
            kind: .incremental, received: changes.count, removed: removed, requests: requests,
            revision: finalRevision,
            seconds: 0)
    }
}
