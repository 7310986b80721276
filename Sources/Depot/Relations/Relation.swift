import Synchronization

/// What happens to the rows that reference a row being removed.
///
/// Declared on the ``ToOne`` that holds the foreign key, applied by Depot inside the removing
/// transaction, identically on every store.
public enum DeleteRule: Sendable, Hashable {
    /// Referencing rows are removed too (and, in turn, the rows referencing them).
    case cascade
    /// The referencing rows' foreign key becomes NULL (the key path must be optional).
    case nullify
    /// The removal fails, naming the referencing rows, and writes nothing.
    case deny
    /// Nothing is done: referencing rows keep a key that no longer resolves.
    case noAction
}

/// A relation declared on `Source`: listed in its ``Entity/relations`` so that stores know about
/// it, and used to include related rows (``Repository/fetch(where:orderBy:limit:offset:including:)``),
/// filter across it, and apply delete rules.
public protocol Relation<Source>: Sendable {
    /// The entity the relation starts from.
    associatedtype Source: Entity
    /// The relation as Depot works with it, without Swift types.
    var descriptor: RelationDescriptor { get }
}

extension Entity {
    /// No relations unless the entity lists some.
    public static var relations: [any Relation<Self>] { [] }
}
