import Depot
import DepotHTTP
import Foundation

/// One entity that syncs: its feed, how its edits are pushed and its conflict policy.
///
/// ```swift
/// let engine = SyncEngine(store: store, client: client, entities: [
///     .entity(Airport.self, feed: AirportsFeed(), push: AirportsPush(), conflicts: .lastWriterWins)
/// ])
/// ```
public struct SyncedEntity: Sendable {
    let box: any SyncedEntityBox

    /// `Root` synced: pulled through `feed`, its local edits pushed through `push`, conflicts
    /// resolved by `conflicts` (the server's row wins by default).
    public static func entity<Root: Entity, Feed: SyncFeed, Push: SyncPush>(
        _ type: Root.Type, feed: Feed, push: Push, conflicts: ConflictPolicy<Root> = .serverWins
    ) -> SyncedEntity where Feed.Root == Root, Push.Root == Root {
        SyncedEntity(box: TypedSyncedEntity(feed: feed, push: push, conflicts: conflicts))
    }

    /// The entity's table.
    public var tableName: String { box.table.name }
}

/// What the engine needs of a synced entity, its types erased.
protocol SyncedEntityBox: Sendable {
    var table: TableDescription { get }
    var feedName: String { get }
    /// The tables this entity's ``ToOne`` keys reference (its own excluded).
    var parentTables: Set<String> { get }
    /// Sends the request for the page after `cursor` and reads it.
    func fetchPage(after cursor: String?, client: APIClient) async throws -> ErasedPage
    /// Stores a page's changes and deletions through `tx` (no outbox recording).
    func store(_ page: ErasedPage, in writer: any StoreWriter) async throws
    /// Pushes one outbox entry, with the version of its row this replica last saw.
    func push(_ entry: OutboxEntry, baseVersion: Int?, client: APIClient) async throws -> ErasedPushResult
    /// The row the conflict policy chooses, as stored values in column order.
    /// The row the entity's policy chooses for a conflicting entry: no values when a delete
    /// stands.
    func resolve(_ entry: OutboxEntry, remote: ErasedRemote) throws -> [StoredValue]
    /// Applies stored values to the row with `key` (an update of existing rows only when the
    /// values lack required columns).
    func apply(values: [String: StoredValue], key: [StoredValue], in writer: any StoreWriter) async throws
}

struct ErasedPage: Sendable {
    var patches: any Sendable
    var keys: [[StoredValue]]
    /// The assigned values by column of the patch at an index of `keys` (computed only for the
    /// rows that need them: those with waiting edits).
    var changes: @Sendable (Int) -> [String: StoredValue]
    var deletions: [[StoredValue]]
    var cursor: String?
    var hasMore: Bool
    var isExpired: Bool
    /// The server's versions of the rows at `keys`, when the feed sends them.
    var versions: [Int]? = nil
}

extension ErasedPage {
    /// Rows the server sent outside a feed: no deletions, no cursor.
    init<Root: Entity>(_ patches: [Patch<Root>]) {
        self.init(
            patches: patches, keys: patches.map(\.key),
            changes: { index in
                Dictionary(patches[index].assignedValues.map { ($0.column, $0.value) }) { _, last in last }
            }, deletions: [], cursor: nil, hasMore: false, isExpired: false)
    }
}

struct ErasedRemote: Sendable {
    var values: [StoredValue]
    var fieldTimes: [String: Date]
    var version: Int?
}

enum ErasedPushResult: Sendable {
    /// Applied; the row's version after it, when the server keeps versions.
    case applied(version: Int?)
    case conflict(ErasedRemote)
}

struct TypedSyncedEntity<Root: Entity, Feed: SyncFeed, Push: SyncPush>: SyncedEntityBox
where Feed.Root == Root, Push.Root == Root {
    let feed: Feed
    let push: Push
    let conflicts: ConflictPolicy<Root>

    var table: TableDescription { Root.schema.table }
    var feedName: String { feed.name }
    var parentTables: Set<String> {
        let own = Root.schema.tableName
        return Set(
            Root.relations.map(\.descriptor).filter { $0.kind == .toOne }.map(\.foreignKey.parentTable.name)
                .filter { $0 != own })
    }

    func fetchPage(after cursor: String?, client: APIClient) async throws -> ErasedPage {
        let response = try await client.send(feed.request(after: cursor))
        let page = try feed.page(from: response)
        let keys = page.changes.map(\.key)
        let width = Root.schema.primaryKeyIndices.count
        if let key = keys.first(where: { $0.count != width }) ?? page.deletions.first(where: { $0.count != width }) {
            throw DepotError(
                .mappingFailed,
                "the feed \(feed.name) sent a key of \(key.count) value(s); \(Root.self)'s has "
                    + "\(Root.schema.primaryKeyIndices.count)", table: Root.schema.tableName)
        }
        return ErasedPage(
            patches: page.changes, keys: keys,
            changes: { [patches = page.changes] index in
                Dictionary(patches[index].assignedValues.map { ($0.column, $0.value) }) { _, last in last }
            },
            deletions: page.deletions, cursor: page.cursor,
            hasMore: page.hasMore, isExpired: page.isExpired, versions: page.versions)
    }

    func store(_ page: ErasedPage, in writer: any StoreWriter) async throws {
        if var patches = page.patches as? [Patch<Root>], !patches.isEmpty {
            // A partial change of a row this replica no longer holds (deleted here, its delete not
            // applied on the server yet) has nothing to update: skip it rather than fail the page
            // forever. Whole rows are created as usual.
            let table = Root.schema.table
            let partial = patches.filter { !$0.assignsEveryRequiredColumn }
            if !partial.isEmpty {
                let stored = try await RowReads.rows(of: table, keys: partial.map(\.key), in: writer)
                let missing = Set(try partial.map(\.key).filter { try stored[SyncJSON.keyText($0)] == nil })
                if !missing.isEmpty {
                    patches.removeAll { missing.contains($0.key) && !$0.assignsEveryRequiredColumn }
                }
            }
            if !patches.isEmpty {
                // The server enforced its relations; a parent may come in a later page (written
                // after its feed was read) or lie outside what this replica receives.
                try await ReferenceChecks.$areSkipped.withValue(true) {
                    try await Transaction(writer: writer).repository(Root.self).apply(patches)
                }
            }
        }
        try await RowReads.remove(from: Root.schema.table, keys: page.deletions, in: writer)
    }

    func push(_ entry: OutboxEntry, baseVersion: Int?, client: APIClient) async throws -> ErasedPushResult {
        let change = try OutgoingChange<Root>(entry, baseVersion: baseVersion)
        switch try await client.send(try push.request(for: change)) {
        case .applied: return .applied(version: nil)
        case .appliedAt(let version): return .applied(version: version)
        case .conflict(let remote):
            return .conflict(
                ErasedRemote(
                    values: Root.schema.values(of: remote.row), fieldTimes: remote.fieldTimes, version: remote.version))
        }
    }

    func resolve(_ entry: OutboxEntry, remote: ErasedRemote) throws -> [StoredValue] {
        let schema = Root.schema
        let change = try OutgoingChange<Root>(entry)
        let remoteRow = try schema.decode(remote.values)
        let base = try change.baseValues.map { values in
            try schema.decode(schema.columns.map { values[$0.name] ?? .null })
        }
        var localValues = schema.values(of: base ?? remoteRow)
        for (index, column) in schema.columns.enumerated() {
            if let value = change.changes[column.name] { localValues[index] = value }
        }
        let conflict = Conflict(
            base: base, local: try schema.decode(localValues), remote: remoteRow,
            changedColumns: change.changedColumns, localEditedAt: entry.editedAt,
            remoteFieldTimes: remote.fieldTimes, isDelete: change.operation == .delete)
        if conflict.isDelete {
            // The delete stands (no row), or the server's row does.
            return try conflicts.deleteStands(conflict) ? [] : remote.values
        }
        return schema.values(of: try conflicts.resolve(conflict))
    }

    func apply(values: [String: StoredValue], key: [StoredValue], in writer: any StoreWriter) async throws {
        // Values the server sent, or local edits checked when they were made, written again over
        // them: a parent one names may be gone since (a refused edit shows until the app acts).
        try await ReferenceChecks.$areSkipped.withValue(true) {
            try await Transaction(writer: writer).repository(Root.self).apply([
                Patch<Root>(key: key, values: values.map { ($0.key, $0.value) })
            ])
        }
    }
}

extension OutgoingChange {
    init(_ entry: OutboxEntry, baseVersion: Int? = nil) throws {
        do {
            self.init(
                key: try SyncJSON.key(entry.key),
                operation: entry.operation == OutboxEntry.Operation.delete ? .delete : .set,
                changes: try SyncJSON.values(entry.changes), baseValues: try entry.base.map(SyncJSON.values),
                editedAt: entry.editedAt, idempotencyKey: entry.idempotencyKey, sequence: entry.sequence,
                baseVersion: baseVersion)
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(
                .decodingFailed, "outbox entry \(entry.sequence) of \(entry.table) cannot be read: \(error)",
                table: OutboxEntry.schema.tableName)
        }
    }
}
