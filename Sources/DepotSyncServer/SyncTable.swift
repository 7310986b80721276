import Depot
import DepotSync
import Foundation

/// Who calls the sync server: what scopes and authorization hooks decide on, and whose
/// idempotency keys a push is matched with (two callers' keys never collide).
///
/// ```swift
/// struct User: SyncCaller { var id: String; var isAdmin: Bool }
/// ```
public protocol SyncCaller: Sendable {
    /// The caller's identity: idempotency keys are kept per caller.
    var id: String { get }
}

/// A push about to change a row, as an authorization hook sees it.
public struct SyncWrite<Root: Entity>: Sendable {
    /// What the push does to the row.
    public enum Kind: Sendable, Equatable {
        /// Creates the row.
        case insert
        /// Changes some of its columns (``SyncWrite/changedColumns``).
        case update
        /// Deletes it.
        case delete
    }

    /// Insert, update or delete.
    public let kind: Kind
    /// The row as the server holds it now; `nil` for an insert.
    public let before: Root?
    /// The row as the push would leave it; `nil` for a delete.
    public let after: Root?
    /// The columns the push changes (every column for an insert; none for a delete).
    public let changedColumns: [String]

    /// The row written or deleted: ``after``, else ``before``.
    public let row: Root

    init(insert row: Root) {
        (kind, before, after, self.row) = (.insert, nil, row, row)
        changedColumns = Root.schema.columns.map(\.name)
    }

    init(update before: Root, to after: Root, columns: [String]) {
        (kind, self.before, self.after, row, changedColumns) = (.update, before, after, after, columns)
    }

    init(delete row: Root) {
        (kind, before, after, self.row, changedColumns) = (.delete, row, nil, row, [])
    }
}

/// One table a ``SyncServer`` serves: which rows each caller receives (its scope), which pushes it
/// accepts (authorization) and, optionally, how the server resolves conflicts itself.
///
/// ```swift
/// .table(Note.self,
///        scope: { user in \.ownerID == user.id },                      // what each caller sees
///        authorize: { write, user in write.row.ownerID == user.id })   // what each caller may push
/// ```
public struct SyncTable<Caller: SyncCaller>: Sendable {
    let box: any ServedTable<Caller>

    /// `Root`'s table, served to each caller as far as `scope` reaches.
    ///
    /// - Parameters:
    ///   - type: The entity (its table is what clients sync).
    ///   - scope: The rows a caller receives and may push to, as a predicate over the caller
    ///     (`{ _ in .all }` for data every caller sees). A row that leaves a caller's scope
    ///     reaches that caller as a deletion.
    ///   - authorize: Whether a caller may make a write (insert, update of some columns, delete);
    ///     without it the table is read-only: every push is refused (403). A push must also leave
    ///     the row inside the caller's scope.
    ///   - conflicts: How the server resolves a push whose base is stale itself (answering
    ///     applied, and logging the outcome so the client pulls it); `nil` answers 409 with the
    ///     server's row and lets the client's policy decide.
    public static func table<Root: Entity>(
        _ type: Root.Type, scope: @escaping @Sendable (Caller) -> Filter<Root>,
        authorize: (@Sendable (SyncWrite<Root>, Caller) async throws -> Bool)? = nil,
        conflicts: ConflictPolicy<Root>? = nil
    ) -> SyncTable {
        SyncTable(box: TypedServedTable(scope: scope, authorize: authorize, conflicts: conflicts))
    }

    /// The table's name.
    public var name: String { box.table.name }
}

/// A served table, its entity erased.
protocol ServedTable<Caller>: Sendable {
    associatedtype Caller: SyncCaller
    var table: TableDescription { get }
    /// The caller's scope as a predicate over the table.
    func scope(_ caller: Caller) -> PredicateNode
    /// Applies one push inside `tx` (which holds the log's head), returning the answer.
    func apply(_ push: DecodedPush, caller: Caller, in tx: Transaction, server: SyncServer<Caller>) async throws
        -> PushOutcome
}

struct TypedServedTable<Caller: SyncCaller, Root: Entity>: ServedTable {
    let scopeFilter: @Sendable (Caller) -> Filter<Root>
    let authorize: (@Sendable (SyncWrite<Root>, Caller) async throws -> Bool)?
    let conflicts: ConflictPolicy<Root>?

    init(
        scope: @escaping @Sendable (Caller) -> Filter<Root>,
        authorize: (@Sendable (SyncWrite<Root>, Caller) async throws -> Bool)?, conflicts: ConflictPolicy<Root>?
    ) {
        self.scopeFilter = scope
        self.authorize = authorize
        self.conflicts = conflicts
    }

    var table: TableDescription { Root.schema.table }

    func scope(_ caller: Caller) -> PredicateNode { scopeFilter(caller).node }
}
