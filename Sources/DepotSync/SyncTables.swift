import Depot
import Foundation

/// One local edit of a synced entity, waiting in the outbox (`depot_sync_outbox`) to be pushed.
///
/// Written in the same transaction as the edit itself, so an edit and its outbox row commit
/// together or not at all, and both survive a restart.
struct OutboxEntry: Entity, Equatable {
    /// The order edits were made in (1, 2, …): pushed in this order.
    var sequence: Int
    /// The entity's table.
    var table: String
    /// The row's primary key (``SyncJSON/keyText(_:)``).
    var key: String
    /// `set` (columns changed or a row created) or `delete`.
    var operation: String
    /// The changed columns and their new values (``SyncJSON/valuesText(_:)``); `{}` for a delete.
    var changes: String
    /// The whole row before the edit; `nil` when the edit created it.
    var base: String?
    /// When the edit was made (the local clock): what last-writer-wins compares.
    var editedAt: Date
    /// Sent with the push, so a server applies a delivery it already applied only once.
    var idempotencyKey: String
    /// Pushes tried and failed in a way worth retrying.
    var attempts: Int
    /// Why the server refused it (status and message, JSON); `nil` while it is pending.
    var rejection: String?

    static let set = "set"
    static let delete = "delete"

    static let schema = Schema<OutboxEntry>("depot_sync_outbox", primaryKey: \.sequence) {
        Column(\.sequence, "sequence")
        Column(\.table, "table_name")
        Column(\.key, "row_key")
        Column(\.operation, "operation")
        Column(\.changes, "changes")
        Column(\.base, "base")
        Column(\.editedAt, "edited_at")
        Column(\.idempotencyKey, "idempotency_key")
        Column(\.attempts, "attempts")
        Column(\.rejection, "rejection")
    }
}

/// How far a feed has been pulled (`depot_sync_cursors`): its cursor, stored in the same
/// transaction as the page that moved it.
struct FeedCursor: Entity, Equatable {
    /// The feed's name (``SyncFeed/name``).
    var feed: String
    /// The cursor to ask from next; `nil` before the first page.
    var cursor: String?
    /// Whether a full copy is under way: ``noCopy``, ``copyIntoEmpty`` (the table was empty when
    /// it began), ``copyTrackingKeys`` (keys delivered since it began are in `depot_sync_seen`).
    var copyMode: Int
    /// When the last page was stored.
    var pulledAt: Date?

    static let noCopy = 0
    static let copyIntoEmpty = 1
    static let copyTrackingKeys = 2

    static let schema = Schema<FeedCursor>("depot_sync_cursors", primaryKey: \.feed) {
        Column(\.feed, "feed")
        Column(\.cursor, "cursor")
        Column(\.copyMode, "copy_mode")
        Column(\.pulledAt, "pulled_at")
    }
}

/// A key a full copy has delivered (`depot_sync_seen`): rows it did not deliver are removed when
/// it ends.
struct SeenKey: Entity, Equatable {
    var feed: String
    var key: String

    static let schema = Schema<SeenKey>("depot_sync_seen", primaryKey: \.feed, \.key) {
        Column(\.feed, "feed")
        Column(\.key, "row_key")
    }
}
