import Depot
import DepotHTTP
import Foundation

/// How a synced entity's local edits reach your API: one request per outbox entry.
///
/// The request carries the change (`value(_:)`: only the changed fields are
/// present), the values the edit started from (`baseValue(_:)`: how a server
/// detects a conflict) and the ``OutgoingChange/idempotencyKey`` (how it applies a delivery it
/// already applied only once). Its response is a ``PushResult``: applied, or a conflict with the
/// server's row; a status the endpoint does not accept throws, and a 4xx other than 401/408/429 is
/// kept as a rejection (``PendingChange``).
///
/// ```swift
/// struct NotesPush: SyncPush {
///     func request(for change: OutgoingChange<Note>) throws -> NotesAPI.Push {
///         NotesAPI.Push(id: try change.key(as: Int.self), title: change.value(\.title),
///                       baseTitle: change.baseValue(\.title), idempotencyKey: change.idempotencyKey)
///     }
/// }
/// ```
public protocol SyncPush<Root>: Sendable {
    /// The entity whose edits are pushed.
    associatedtype Root: Entity
    /// The request for one change.
    associatedtype Request: Endpoint where Request.Response == PushResult<Root>
    /// The request that sends `change`.
    func request(for change: OutgoingChange<Root>) throws -> Request
}

/// What a server did with a pushed change.
public enum PushResult<Root: Entity>: Sendable {
    /// Applied (or applied before: a repeated delivery).
    case applied
    /// Applied, and the row's version on the server after it (what the row's next push
    /// carries as its base version).
    case appliedAt(version: Int)
    /// Not applied: the row changed on the server since the edit's base. The server's row, and
    /// when each of its fields was last written where the server keeps that (for
    /// ``ConflictPolicy/lastWriterWins``).
    case conflict(RemoteRow<Root>)
}

/// A row as the server holds it, in a conflict.
public struct RemoteRow<Root: Entity>: Sendable {
    /// The server's row.
    public var row: Root
    /// When each field was last written, by column name; fields missing count as never.
    public var fieldTimes: [String: Date]
    /// The row's version on the server, where the server keeps versions.
    public var version: Int?

    /// A remote row; `fieldTimes` by column name.
    public init(_ row: Root, fieldTimes: [String: Date] = [:], version: Int? = nil) {
        self.version = version
        self.row = row
        self.fieldTimes = fieldTimes
    }
}

/// One local edit on its way to the server: the key, the changed fields and the values they had.
public struct OutgoingChange<Root: Entity>: Sendable {
    /// Whether the edit set fields (or created the row) or deleted the row.
    public enum Operation: String, Sendable {
        /// Fields set, or a row created (``OutgoingChange/baseValues`` is then `nil`).
        case set
        /// The row deleted.
        case delete
    }

    /// The row's primary-key values, in key order.
    public let key: [StoredValue]
    /// Set or delete.
    public let operation: Operation
    /// The changed columns and their new values.
    public let changes: [String: StoredValue]
    /// The whole row before the edit (what a three-way merge calls the base); `nil` for a new row.
    public let baseValues: [String: StoredValue]?
    /// When the edit was made, by the local clock.
    public let editedAt: Date
    /// The key a server uses to apply this delivery once, however often it arrives.
    public let idempotencyKey: String
    /// The outbox's sequence number (order of edits).
    public let sequence: Int
    /// The server's version of the row as this replica last saw it (a feed page's, or the answer
    /// to its last push); `nil` when the feed sends no versions.
    public let baseVersion: Int?

    /// The names of the changed columns, in schema order.
    public var changedColumns: [String] {
        Root.schema.columns.map(\.name).filter { changes[$0] != nil }
    }

    /// The single-column key as `Key`.
    ///
    /// - Throws: `DepotError` of kind `.decodingFailed` when the key is composite or not a `Key`.
    public func key<Key: StorableValue>(as type: Key.Type) throws -> Key {
        guard key.count == 1 else {
            throw DepotError(
                .decodingFailed, "\(Root.self) has a key of \(key.count) columns, not one",
                table: Root.schema.tableName)
        }
        do {
            return try Key(storedValue: key[0])
        } catch {
            throw DepotError(
                .decodingFailed, "the key of a \(Root.self) change \(error)", table: Root.schema.tableName)
        }
    }

    /// The new value of a changed field; `.absent` when the edit did not change it.
    public func value<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>) -> Field<Value> {
        Self.field(changes, keyPath)
    }

    /// The new value of a changed optional field: `.null` when the edit cleared it,
    /// `.absent` when it did not change it.
    public func value<Value: StorableValue>(_ keyPath: KeyPath<Root, Value?>) -> Field<Value> {
        Self.optionalField(changes, keyPath)
    }

    /// The value a field had before the edit; `.absent` for a new row.
    public func baseValue<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>) -> Field<Value> {
        Self.field(baseValues ?? [:], keyPath)
    }

    /// The value an optional field had before the edit (`.null` when it had none);
    /// `.absent` for a new row.
    public func baseValue<Value: StorableValue>(_ keyPath: KeyPath<Root, Value?>) -> Field<Value> {
        Self.optionalField(baseValues ?? [:], keyPath)
    }

    /// The change as a patch: its key and the changed fields.
    public var patch: Patch<Root> {
        Patch(key: key, values: changedColumns.compactMap { name in changes[name].map { (name, $0) } })
    }

    private static func field<Value: StorableValue>(
        _ values: [String: StoredValue], _ keyPath: KeyPath<Root, Value>
    ) -> Field<Value> {
        guard let name = try? Root.schema.columnName(keyPath), let stored = values[name],
            let value = try? Value(storedValue: stored)
        else { return .absent }
        return .value(value)
    }

    private static func optionalField<Value: StorableValue>(
        _ values: [String: StoredValue], _ keyPath: KeyPath<Root, Value?>
    ) -> Field<Value> {
        guard let name = try? Root.schema.columnName(keyPath), let stored = values[name] else { return .absent }
        if stored.isNull { return .null }
        guard let value = try? Value(storedValue: stored) else { return .absent }
        return .value(value)
    }
}
