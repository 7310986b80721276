import Depot
import Foundation

/// A pushed edit the server refused because the row changed there since the edit's base: the three
/// versions a policy chooses from.
public struct Conflict<Root: Entity>: Sendable {
    /// The row as it was before the local edit; `nil` when the edit created it.
    public let base: Root?
    /// The row as the local edit made it (the base with the edit's changes); for a delete, the
    /// row as it was when deleted.
    public let local: Root
    /// Whether the local edit deleted the row (see ``ConflictPolicy/deleteStands(_:)``).
    public let isDelete: Bool
    /// The row as the server holds it now.
    public let remote: Root
    /// The columns the local edit changed.
    public let changedColumns: [String]
    /// When the local edit was made.
    public let localEditedAt: Date
    /// When the server last wrote each field, by column name (where the server keeps it).
    public let remoteFieldTimes: [String: Date]

    /// A conflict from its parts (to test a policy).
    public init(
        base: Root?, local: Root, remote: Root, changedColumns: [String], localEditedAt: Date,
        remoteFieldTimes: [String: Date], isDelete: Bool = false
    ) {
        self.base = base
        self.local = local
        self.isDelete = isDelete
        self.remote = remote
        self.changedColumns = changedColumns
        self.localEditedAt = localEditedAt
        self.remoteFieldTimes = remoteFieldTimes
    }

    /// The remote row with the local edit's values in `columns` (all changed columns by default).
    ///
    /// - Throws: `DepotError` when a value cannot be decoded back into the entity.
    public func remote(withLocal columns: [String]? = nil) throws -> Root {
        let schema = Root.schema
        var values = schema.values(of: remote)
        let localValues = schema.values(of: local)
        let chosen = Set(columns ?? changedColumns)
        for (index, column) in schema.columns.enumerated() where chosen.contains(column.name) {
            values[index] = localValues[index]
        }
        return try schema.decode(values)
    }
}

/// What a synced entity does when a pushed edit conflicts with the server's row, declared per
/// entity. The row it chooses is pushed (when it differs from the server's) and stored locally,
/// so every replica ends with it.
///
/// A pushed *delete* conflicts when the server's row changed since the client read it; the policy
/// then says whether the delete stands (the row is deleted everywhere) or the server's row does
/// (it comes back on this replica): ``deleteStands(_:)``.
///
/// ```swift
/// .entity(Note.self, feed: NotesFeed(), push: NotesPush(), conflicts: .lastWriterWins)
/// .entity(Counter.self, feed: CountersFeed(), push: CountersPush(), conflicts: .merge { conflict in
///     var merged = conflict.remote           // both sides' increments since the base
///     merged.count += conflict.local.count - (conflict.base?.count ?? 0)
///     return merged
/// } deletes: { conflict in
///     conflict.remote.count == conflict.base?.count   // delete only what nobody counted on since
/// })
/// ```
public struct ConflictPolicy<Root: Entity>: Sendable {
    private let body: @Sendable (Conflict<Root>) throws -> Root
    private let deletes: @Sendable (Conflict<Root>) throws -> Bool
    /// A short name for logs and status ("server wins", …).
    public let name: String

    /// A policy from a function choosing the row every replica ends with, and one saying whether
    /// a conflicting delete stands (by default it does not: the server's row stays).
    public init(
        name: String, resolve: @escaping @Sendable (Conflict<Root>) throws -> Root,
        deletes: @escaping @Sendable (Conflict<Root>) throws -> Bool = { _ in false }
    ) {
        self.name = name
        self.body = resolve
        self.deletes = deletes
    }

    /// The row this policy chooses for `conflict`: what is pushed and stored everywhere.
    public func resolve(_ conflict: Conflict<Root>) throws -> Root { try body(conflict) }

    /// Whether a local delete that met a changed server row (``Conflict/isDelete``) stands: `true`
    /// pushes the delete again over the server's row, `false` keeps the server's row, which
    /// returns on this replica.
    public func deleteStands(_ conflict: Conflict<Root>) throws -> Bool { try deletes(conflict) }

    /// The server's row stands; the local edit is dropped (a delete too: the row comes back).
    public static var serverWins: ConflictPolicy {
        ConflictPolicy(name: "server wins", resolve: { $0.remote }, deletes: { _ in false })
    }

    /// The local edit's fields are pushed again over the server's row; fields it did not change
    /// keep the server's values. A delete stands.
    public static var clientWins: ConflictPolicy {
        ConflictPolicy(name: "client wins", resolve: { try $0.remote(withLocal: nil) }, deletes: { _ in true })
    }

    /// Field by field, the later write wins: a field the local edit changed keeps the local value
    /// unless the server wrote that field after the edit was made (``Conflict/remoteFieldTimes``;
    /// a field without a time counts as written never). Ties go to the server. A delete stands
    /// only when the server wrote no field after it was made.
    public static var lastWriterWins: ConflictPolicy {
        ConflictPolicy(
            name: "last writer wins",
            resolve: { conflict in
                let local = conflict.changedColumns.filter { column in
                    guard let remoteTime = conflict.remoteFieldTimes[column] else { return true }
                    return conflict.localEditedAt > remoteTime
                }
                return try conflict.remote(withLocal: local)
            },
            deletes: { conflict in
                conflict.remoteFieldTimes.values.allSatisfy { conflict.localEditedAt > $0 }
            })
    }

    /// A three-way merge of your own: given the base, the local and the remote row, the row every
    /// replica ends with; `deletes` says whether a conflicting local delete stands (by default it
    /// does not: the server's row stays, and nothing is lost).
    public static func merge(
        _ body: @escaping @Sendable (Conflict<Root>) throws -> Root,
        deletes: @escaping @Sendable (Conflict<Root>) throws -> Bool = { _ in false }
    ) -> ConflictPolicy {
        ConflictPolicy(name: "merge", resolve: body, deletes: deletes)
    }
}
