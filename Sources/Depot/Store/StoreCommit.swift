/// A committed transaction, as announced to observers.
public struct StoreCommit: Sendable, Hashable {
    /// The tables the transaction wrote to.
    public var tables: Set<String>

    /// A notice of a commit that wrote to `tables` (table names, as in ``TableDescription/name``).
    public init(tables: Set<String>) { self.tables = tables }
}
