/// A committed transaction, as announced to observers.
public struct StoreCommit: Sendable, Hashable {
    /// The tables the transaction wrote to.
    public var tables: Set<String>
    /// Whether any table may have changed: commits may have gone unannounced (a store's listener
    /// came into force after observers had read, or reconnected after losing its connection), so
    /// every observer reads its query again once.
    public var mayHaveChangedAnything: Bool

    /// A notice of a commit that wrote to `tables` (table names, as in ``TableDescription/name``).
    public init(tables: Set<String>) {
        self.tables = tables
        self.mayHaveChangedAnything = false
    }

    /// A notice that any table may have changed, unannounced: every observer reads again once.
    ///
    /// ```swift
    /// // a listener that lost its connection, once it listens again:
    /// broadcaster.publish(.anythingMayHaveChanged)
    /// ```
    public static let anythingMayHaveChanged: StoreCommit = {
        var commit = StoreCommit(tables: [])
        commit.mayHaveChangedAnything = true
        return commit
    }()

    /// This notice, naming `tables` as written too.
    public func adding(_ tables: Set<String>) -> StoreCommit {
        var commit = self
        commit.tables.formUnion(tables)
        return commit
    }

    /// Whether this commit may have changed any of `tables`.
    public func mayHaveChanged(anyOf tables: Set<String>) -> Bool {
        mayHaveChangedAnything || !self.tables.isDisjoint(with: tables)
    }
}

/// A store that hears other processes' commits through a listener of its own, which comes into
/// force some time after the first observer subscribes (PostgreSQL's `LISTEN`). Tests that count
/// an observer's reads wait for it first: its coming into force makes every observer read again.
package protocol CommitListening: Store {
    /// Waits until commits of other stores are being received, for at most `timeout`; returns
    /// whether they are.
    func waitUntilListening(timeout: Duration) async -> Bool
}
