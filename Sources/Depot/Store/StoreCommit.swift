/// A committed transaction, as announced to observers.
public struct StoreCommit: Sendable, Hashable {
    /// The tables the transaction wrote to.
    public var tables: Set<String>
    /// Whether any table may have changed: commits may have gone unannounced (a store's listener
    /// came into force after observers had read, or reconnected after losing its connection), so
    /// every observer reads its query again once.
    public var mayHaveChangedAnything: Bool
    /// The primary keys (values in ``TableDescription/primaryKey`` order) of the rows the
    /// transaction may have changed, for those of ``tables`` where it knows them all: Depot's own
    /// writes of rows by key. A table in ``tables`` without an entry may have changed in any row.
    ///
    /// Observers whose query can be checked row by row read only these rows again.
    public var changedKeys: [String: Set<[StoredValue]>]
    /// The commit's place among those its store announced (1, 2, …), when the store numbers them:
    /// an observer that missed one cannot trust ``changedKeys`` and reads its query again.
    package var sequence: Int?

    /// A notice of a commit that wrote to `tables` (table names, as in ``TableDescription/name``),
    /// any of their rows.
    public init(tables: Set<String>) {
        self.init(tables: tables, changedKeys: [:])
    }

    /// A notice of a commit that wrote to `tables`, and to no rows of them but those keyed in
    /// `changedKeys` (for the tables it holds).
    ///
    /// ```swift
    /// StoreCommit(tables: ["airports"], changedKeys: ["airports": [[.text("ENGM")]]])
    /// ```
    public init(tables: Set<String>, changedKeys: [String: Set<[StoredValue]>]) {
        self.tables = tables
        self.mayHaveChangedAnything = false
        self.changedKeys = changedKeys.filter { tables.contains($0.key) }
    }

    /// How many keys a commit names per table at most: a transaction that writes more rows of a
    /// table announces the table alone (reading a result again is cheaper by then).
    package static let keyLimit = 512

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

    /// This notice, naming `tables` as written too (any of their rows).
    public func adding(_ tables: Set<String>) -> StoreCommit {
        var commit = self
        commit.tables.formUnion(tables)
        for table in tables { commit.changedKeys[table] = nil }
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
