import Depot
import Foundation

/// One local edit of a synced entity, waiting in the outbox (`depot_sync_outbox`) to be pushed.
///
/// Written in the same transaction as the edit itself, so an edit and its outbox row commit
/// together or not at all, and both survive a restart. Values are JSON text, not a JSON column:
/// PostgreSQL's `jsonb` would drop the sign of `-0.0` and refuse NUL in text.
@Entity("depot_sync_outbox")
struct OutboxEntry: Equatable {
    /// What an edit did to its row.
    enum Operation: String, StorableValue, Sendable {
        /// Columns changed, or the row created.
        case set
        /// The row deleted.
        case delete
    }

    /// The order edits were made in (1, 2, …): pushed in this order.
    @PrimaryKey var sequence: Int
    /// The entity's table.
    @Column("table_name") var table: String
    /// The row's primary key (``SyncJSON/keyText(_:)``).
    @Column("row_key") var key: String
    var operation: Operation
    /// The changed columns and their new values (``SyncJSON/valuesText(_:)``); `{}` for a delete.
    var changes: String
    /// The whole row before the edit; `nil` when the edit created it.
    var base: String?
    /// When the edit was made (the local clock): what last-writer-wins compares.
    @Column("edited_at") var editedAt: Date
    /// Sent with the push, so a server applies a delivery it already applied only once.
    @Column("idempotency_key") var idempotencyKey: String
    /// Pushes tried and failed in a way worth retrying.
    var attempts: Int
    /// Why the server refused it (status and message, JSON); `nil` while it is pending.
    var rejection: String?
}

/// How far a feed has been pulled (`depot_sync_cursors`): its cursor, stored in the same
/// transaction as the page that moved it.
@Entity("depot_sync_cursors")
struct FeedCursor: Equatable {
    /// Whether a full copy is under way (stored as 0, 1, 2).
    enum CopyMode: Int, StorableValue, Sendable {
        /// No copy: the cursor follows changes.
        case none = 0
        /// A copy into a table that was empty when it began: nothing can be left over.
        case intoEmpty = 1
        /// A copy into a table that held rows: keys delivered since it began are in
        /// `depot_sync_seen`, and the rows it did not deliver are removed when it ends.
        case trackingKeys = 2
    }

    /// The feed's name (``SyncFeed/name``).
    @PrimaryKey var feed: String
    /// The cursor to ask from next; `nil` before the first page.
    var cursor: String?
    @Column("copy_mode") var copyMode: CopyMode
    /// When the last page was stored.
    @Column("pulled_at") var pulledAt: Date?
}

/// A key a full copy has delivered (`depot_sync_seen`): rows it did not deliver are removed when
/// it ends.
@Entity("depot_sync_seen")
struct SeenKey: Equatable {
    @PrimaryKey var feed: String
    @PrimaryKey @Column("row_key") var key: String
}

/// The row as the server last had it (`depot_sync_shadows`), where that is not the base of the
/// row's earliest waiting edit: what discarding an edit puts back. While no pull has touched a row
/// with waiting edits, its earliest edit's base is that row (so a local edit writes no shadow);
/// a pulled page, an applied push or a resolved conflict of such a row writes one, and it is
/// removed with the row's last outbox entry.
@Entity("depot_sync_shadows")
struct ShadowRow: Equatable {
    @PrimaryKey @Column("table_name") var table: String
    @PrimaryKey @Column("row_key") var key: String
    /// The row's values by column (``SyncJSON/valuesText(_:)``); `nil` when the server deleted it.
    @Column("row_values") var values: String?
}

/// The server's version of a row as this replica last saw it (`depot_sync_versions`): from a
/// feed page that sends versions, or the answer to a push. A push carries it, so the server
/// finds a conflict when the row changed since, even back to the same values.
@Entity("depot_sync_versions")
struct RowVersion: Equatable {
    @PrimaryKey @Column("table_name") var table: String
    @PrimaryKey @Column("row_key") var key: String
    var version: Int

    /// Stores the versions of the rows at `keys` (`nil`: forgets them, the rows being gone).
    static func store(_ table: String, keys: [String], versions: [Int]?, in writer: any StoreWriter) async throws {
        guard !keys.isEmpty else { return }
        let repository = Transaction(writer: writer).repository(RowVersion.self)
        if let versions {
            try await repository.upsert(
                zip(keys, versions).map { RowVersion(table: table, key: $0, version: $1) })
        } else {
            var start = 0
            while start < keys.count {
                let chunk = Array(keys[start..<min(start + 500, keys.count)])
                start += 500
                _ = try await repository.remove(where: \.table == table && .in(\.key, chunk))
            }
        }
    }
}

/// Reads and moves shadows inside a transaction.
enum Shadows {
    /// The server's row as last seen, for a row with waiting edits: the shadow row, else the base of
    /// its earliest waiting edit (`fallback` when none is left). `nil` when the server does not have
    /// the row (deleted there, or created here and not pushed yet).
    static func serverValues(
        _ table: String, _ key: String, fallback: OutboxEntry? = nil, in writer: any StoreWriter
    ) async throws -> [String: StoredValue]? {
        let tx = Transaction(writer: writer)
        if let shadow = try await tx.repository(ShadowRow.self).find(table, key) {
            return try shadow.values.map(SyncJSON.values)
        }
        let earliest = try await tx.repository(OutboxEntry.self).first(
            where: \.table == table && \.key == key, orderBy: [.ascending(\.sequence)])
        let entry = [earliest, fallback].compactMap { $0 }.min { $0.sequence < $1.sequence }
        return try entry?.base.map(SyncJSON.values)
    }

    /// Writes the implicit shadow of `entry`'s row down as a shadow row (when it has none), before
    /// the entry whose base it is leaves the outbox or changes.
    static func materialize(_ entry: OutboxEntry, in writer: any StoreWriter) async throws {
        let shadows = Transaction(writer: writer).repository(ShadowRow.self)
        guard try await shadows.find(entry.table, entry.key) == nil else { return }
        let values = try await serverValues(entry.table, entry.key, fallback: entry, in: writer)
        try await shadows.insert(
            ShadowRow(table: entry.table, key: entry.key, values: try values.map(SyncJSON.valuesText)))
    }

    /// Moves the server's row on by `changes` (its new values of some columns; all of them with
    /// `replacing`), or marks it deleted (`changes` nil), writing the shadow row.
    static func advance(
        _ table: String, _ key: String, changes: [String: StoredValue]?, replacing: Bool = false,
        in writer: any StoreWriter
    ) async throws {
        let shadows = Transaction(writer: writer).repository(ShadowRow.self)
        guard let changes else {
            try await shadows.upsert(ShadowRow(table: table, key: key, values: nil))
            return
        }
        var values = replacing ? [:] : try await serverValues(table, key, in: writer) ?? [:]
        values.merge(changes) { _, new in new }
        try await shadows.upsert(ShadowRow(table: table, key: key, values: try SyncJSON.valuesText(values)))
    }

    /// After the server applied `entry`: moves the shadow row on, if the row has one (otherwise
    /// the next waiting edit's base already is the server's row).
    static func applied(_ entry: OutboxEntry, in writer: any StoreWriter) async throws {
        let shadows = Transaction(writer: writer).repository(ShadowRow.self)
        if try await shadows.find(entry.table, entry.key) != nil {
            let changes = entry.operation == OutboxEntry.Operation.delete ? nil : try SyncJSON.values(entry.changes)
            try await advance(entry.table, entry.key, changes: changes, in: writer)
        }
        try await dropIfDone(entry.table, entry.key, in: writer)
    }

    /// Drops the shadow when no outbox entry of its row is left.
    static func dropIfDone(_ table: String, _ key: String, in writer: any StoreWriter) async throws {
        let tx = Transaction(writer: writer)
        guard try await tx.repository(OutboxEntry.self).count(where: \.table == table && \.key == key) == 0 else {
            return
        }
        _ = try await tx.repository(ShadowRow.self).remove(table, key)
    }
}
