import Depot
import DepotHTTP
import Foundation

/// Why a server refused a pushed change: its status and message. Kept with the change in the
/// outbox until the app discards, retries or rebases it.
public struct SyncRejection: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// The HTTP status (a 4xx).
    public var status: Int
    /// The server's message, or what the client made of the response.
    public var message: String
    /// The endpoint that refused it (`METHOD /path`).
    public var endpoint: String

    /// A rejection from its parts.
    public init(status: Int, message: String, endpoint: String) {
        self.status = status
        self.message = message
        self.endpoint = endpoint
    }

    /// "409 from PATCH /airports/ENGM: …".
    public var description: String { "\(status) from \(endpoint): \(message)" }

    func jsonText() throws -> String {
        String(decoding: try SyncJSON.encoder().encode(self), as: UTF8.self)
    }
}

/// A local edit waiting in the outbox.
public struct PendingChange: Sendable, Equatable {
    /// The order of the edit among all local edits.
    public var sequence: Int
    /// The entity's table.
    public var table: String
    /// The row's primary-key values.
    public var key: [StoredValue]
    /// The changed columns and their new values; empty for a delete.
    public var changes: [String: StoredValue]
    /// Whether the edit deleted the row.
    public var isDelete: Bool
    /// When the edit was made.
    public var editedAt: Date
    /// Failed pushes worth retrying so far.
    public var attempts: Int
    /// Why the server refused it; `nil` while it waits to be pushed.
    public var rejection: SyncRejection?
    /// The key its push is sent under (a retry or a rebase gives it a new one).
    public var idempotencyKey: String

    init(_ entry: OutboxEntry) throws {
        idempotencyKey = entry.idempotencyKey
        sequence = entry.sequence
        table = entry.table
        key = try SyncJSON.key(entry.key)
        changes = try SyncJSON.values(entry.changes)
        isDelete = entry.operation == OutboxEntry.Operation.delete
        editedAt = entry.editedAt
        attempts = entry.attempts
        rejection = try entry.rejection.map { try JSONDecoder().decode(SyncRejection.self, from: Data($0.utf8)) }
    }
}

extension SyncEngine {
    /// The local edits not pushed yet, rejected ones included, in the order they were made.
    public func pendingChanges() async throws -> [PendingChange] {
        try await base.repository(OutboxEntry.self).fetch(orderBy: [.ascending(\.sequence)]).map(PendingChange.init)
    }

    /// The edits the server refused, in the order they were made.
    public func rejectedChanges() async throws -> [PendingChange] {
        try await base.repository(OutboxEntry.self).fetch(
            where: \.rejection != nil, orderBy: [.ascending(\.sequence)]
        ).map(PendingChange.init)
    }

    /// The keys of `entity`'s rows with local edits not pushed yet: what a list marks "pending".
    ///
    /// ```swift
    /// let pending = try await engine.pendingKeys(Airport.self, as: String.self)   // ["ENGM"]
    /// ```
    public func pendingKeys<Root: Entity, Key: StorableValue & Hashable>(_ entity: Root.Type, as key: Key.Type)
        async throws -> Set<Key>
    {
        let table = Root.schema.tableName
        var keys = Set<Key>()
        for entry in try await base.repository(OutboxEntry.self).fetch(where: \.table == table) {
            let values = try SyncJSON.key(entry.key)
            if values.count == 1, let value = try? Key(storedValue: values[0]) { keys.insert(value) }
        }
        return keys
    }

    /// Pushes a rejected change again at the next sync, as it is (after the server was fixed, or
    /// the rule it broke changed), under a new idempotency key.
    public func retry(_ change: PendingChange) async throws {
        // Not while a sync pushes: it could be pushing this very change.
        try await lock.withLock {
            try await base.transaction { writer in
                var entry = try await Self.entry(for: change, in: writer)
                entry.rejection = nil
                entry.attempts = 0
                entry.idempotencyKey = UUID().uuidString
                try await Transaction(writer: writer).repository(OutboxEntry.self).upsert(entry)
            }
        }
    }

    /// Drops a change from the outbox and puts the local row back as the server last had it in
    /// the columns the change set (the whole row, for a delete; a row the server does not have is
    /// removed), with the row's other waiting edits on top.
    public func discard(_ change: PendingChange) async throws {
        try await lock.withLock {
            guard let entity = entities[change.table] else { throw Self.notSynced(change.table) }
            try await base.transaction { writer in
                let entry = try await Self.entry(for: change, in: writer)
                try await Shadows.materialize(entry, in: writer)
                _ = try await Transaction(writer: writer).repository(OutboxEntry.self).remove(entry.sequence)
                try await self.restore(entry, entity: entity, in: writer)
                try await Shadows.dropIfDone(entry.table, entry.key, in: writer)
            }
        }
    }

    /// Replaces a rejected change with `patch` (for the same row), stores it locally and pushes it
    /// at the next sync: how an app fixes what the server refused.
    ///
    /// ```swift
    /// for change in try await engine.rejectedChanges() where change.rejection?.status == 422 {
    ///     try await engine.rebase(change, onto: Patch<Airport>(key: "ENGM").set(\.name, "Oslo"))
    /// }
    /// ```
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when the patch is for another row or entity,
    ///   or the change is no longer in the outbox.
    public func rebase<Root: Entity>(_ change: PendingChange, onto patch: Patch<Root>) async throws {
        guard let entity = entities[change.table], change.table == Root.schema.tableName else {
            throw DepotError(
                .invalidQuery, "a change of \(change.table) cannot be rebased onto a patch of \(Root.self)",
                table: change.table)
        }
        guard patch.key == change.key else {
            throw DepotError(
                .invalidQuery,
                "a rebase must patch the same row: the change is for \(change.key), the patch "
                    + "for \(patch.key)", table: change.table)
        }
        let values = Dictionary(patch.assignedValues.map { ($0.column, $0.value) }) { _, last in last }
        try await lock.withLock {
            try await base.transaction { writer in
                let previous = try await Self.entry(for: change, in: writer)
                try await Shadows.materialize(previous, in: writer)
                var entry = previous
                entry.changes = try SyncJSON.valuesText(values)
                entry.operation = OutboxEntry.Operation.set
                entry.rejection = nil
                entry.attempts = 0
                entry.idempotencyKey = UUID().uuidString
                try await Transaction(writer: writer).repository(OutboxEntry.self).upsert(entry)
                // The old change's columns back to the server's, then every waiting edit of the row,
                // the new one among them, in order.
                try await self.restore(previous, entity: entity, in: writer)
            }
        }
    }

    /// The outbox entry `change` was listed from; throws when it is gone (pushed, discarded,
    /// rebased since), so that an action never lands on another entry given the same number.
    static func entry(for change: PendingChange, in writer: any StoreWriter) async throws -> OutboxEntry {
        guard let entry = try await Transaction(writer: writer).repository(OutboxEntry.self).find(change.sequence),
            entry.table == change.table, entry.idempotencyKey == change.idempotencyKey
        else { throw gone(change) }
        return entry
    }

    /// Puts the columns `entry` changed (the whole row, for a delete) back to the server's values
    /// as last seen (a row the server does not have is removed), then writes every waiting edit of
    /// the row again, in order.
    func restore(_ entry: OutboxEntry, entity: any SyncedEntityBox, in writer: any StoreWriter) async throws {
        let key = try SyncJSON.key(entry.key)
        if let values = try await Shadows.serverValues(entry.table, entry.key, fallback: entry, in: writer) {
            let changed = try SyncJSON.values(entry.changes)
            let restored =
                entry.operation == OutboxEntry.Operation.delete ? values : values.filter { changed[$0.key] != nil }
            if !restored.isEmpty {
                do {
                    try await writer.savepoint { inner in
                        try await entity.apply(values: restored, key: key, in: inner)
                    }
                } catch let error as DepotError where error.kind == .missingColumns {
                    // Gone locally and partial: nothing to restore onto.
                }
            }
        } else {
            try await RowReads.remove(from: entity.table, keys: [key], in: writer)
        }
        let waiting = try await Transaction(writer: writer).repository(OutboxEntry.self).fetch(
            where: \.table == entry.table && \.key == entry.key, orderBy: [.ascending(\.sequence)])
        for other in waiting { try await reapply(other, entity: entity, in: writer) }
    }

    static func gone(_ change: PendingChange) -> DepotError {
        DepotError(
            .invalidQuery, "change \(change.sequence) of \(change.table) is no longer in the outbox",
            table: OutboxEntry.schema.tableName)
    }

    static func notSynced(_ table: String) -> DepotError {
        DepotError(.invalidQuery, "\(table) does not sync with this engine", table: table)
    }
}
