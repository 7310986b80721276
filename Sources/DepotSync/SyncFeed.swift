import Depot
import DepotHTTP
import Foundation

/// Where a synced entity's changes come from: a paged change feed of your API, read from a cursor.
///
/// The engine asks for the page after the stored cursor (`nil` the first time: a full copy), turns
/// the response into a ``FeedPage`` and stores the page's rows, its deletions and its next cursor
/// in one transaction, so a sync killed between pages resumes exactly where it stopped.
///
/// ```swift
/// struct NotesFeed: SyncFeed {
///     func request(after cursor: String?) -> NotesAPI.Changes { NotesAPI.Changes(cursor: cursor) }
///     func page(from response: NotesAPI.ChangesPage) throws -> FeedPage<Note> {
///         if response.expired { return .expired }
///         return FeedPage(
///             changes: response.notes.map(NoteMapper().patch(from:)), deletedKeys: response.deleted,
///             cursor: response.cursor, hasMore: response.more)
///     }
/// }
/// ```
public protocol SyncFeed<Root>: Sendable {
    /// The entity the feed updates.
    associatedtype Root: Entity
    /// The request for one page.
    associatedtype Request: Endpoint
    /// The name the feed's cursor is stored under; the table's name by default.
    var name: String { get }
    /// The request for the page after `cursor`; `nil` asks for a full copy from the start.
    func request(after cursor: String?) -> Request
    /// What a page says: rows (whole or partial), deletions, the next cursor, or that the cursor
    /// is too old (``FeedPage/expired``).
    func page(from response: Request.Response) throws -> FeedPage<Root>
}

extension SyncFeed {
    /// The entity's table name.
    public var name: String { Root.schema.tableName }
}

/// One page of a change feed, as the engine stores it.
public struct FeedPage<Root: Entity>: Sendable {
    /// Rows changed or created, whole or partial: absent fields stay as stored.
    public var changes: [Patch<Root>]
    /// The keys of rows deleted on the server (tombstones), in key order for composite keys.
    public var deletions: [[StoredValue]]
    /// The cursor to ask from next time.
    public var cursor: String?
    /// Whether another page follows at once.
    public var hasMore: Bool
    /// Whether the server no longer reaches back to the cursor asked from: the engine starts a
    /// full copy (asking from `nil`) and, when it ends, removes rows it did not deliver.
    public var isExpired: Bool
    /// The server's version of each changed row, in the order of ``changes``, when the feed
    /// sends them: a push then carries the version it last saw of its row, so the server finds
    /// a conflict even when the row changed back to the values the push started from.
    public var versions: [Int]?

    /// A page from its parts (with the changed rows' versions, when the server keeps them).
    public init(
        changes: [Patch<Root>], deletions: [[StoredValue]] = [], cursor: String?, hasMore: Bool, versions: [Int]? = nil
    ) {
        self.changes = changes
        self.deletions = deletions
        self.cursor = cursor
        self.hasMore = hasMore
        self.isExpired = false
        self.versions = versions
    }

    /// A page of an entity with a single-column key, its deletions given as keys.
    public init<Key: StorableValue>(
        changes: [Patch<Root>], deletedKeys: [Key], cursor: String?, hasMore: Bool
    ) {
        self.init(
            changes: changes, deletions: deletedKeys.map { [$0.storedValue] }, cursor: cursor, hasMore: hasMore)
    }

    /// The answer of a server that no longer has the changes after the cursor asked from.
    public static var expired: FeedPage {
        var page = FeedPage(changes: [], cursor: nil, hasMore: false)
        page.isExpired = true
        return page
    }
}
