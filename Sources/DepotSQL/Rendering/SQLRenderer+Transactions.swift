import Depot

extension SQLRenderer {
    /// Begins a transaction that writes: `BEGIN IMMEDIATE` on SQLite (the database's write lock is
    /// taken now, so the transaction cannot fail to upgrade later), `BEGIN` on PostgreSQL.
    public var begin: SQLStatement {
        SQLStatement(sql: dialect.beginWrite)
    }

    /// `COMMIT`.
    public var commit: SQLStatement { SQLStatement(sql: "COMMIT") }

    /// `ROLLBACK`.
    public var rollback: SQLStatement { SQLStatement(sql: "ROLLBACK") }

    /// Begins the transaction a hand-written statement outside `store.write` runs in, so it can
    /// only read: `BEGIN READ ONLY` on PostgreSQL (ended by ``rollback``); `nil` on SQLite, whose
    /// reader connections refuse a statement that writes before it runs.
    public var readOnlyBegin: SQLStatement? {
        dialect.beginReadOnly.map { SQLStatement(sql: $0) }
    }

    /// `SAVEPOINT "name"`: what `StoreWriter.savepoint(_:)` opens.
    public func savepoint(_ name: String) -> SQLStatement {
        SQLStatement(sql: "SAVEPOINT \(quote(name))")
    }

    /// `RELEASE SAVEPOINT "name"`: keeps what was written since the savepoint.
    public func releaseSavepoint(_ name: String) -> SQLStatement {
        SQLStatement(sql: "RELEASE SAVEPOINT \(quote(name))")
    }

    /// `ROLLBACK TO SAVEPOINT "name"`: undoes what was written since the savepoint.
    public func rollbackToSavepoint(_ name: String) -> SQLStatement {
        SQLStatement(sql: "ROLLBACK TO SAVEPOINT \(quote(name))")
    }

    /// The statement that makes migrations of one schema take turns until the transaction
    /// ends: a transaction-scoped advisory lock of the current schema on PostgreSQL; `nil` on
    /// SQLite, where ``begin`` holds the database's only write lock already.
    ///
    /// ```sql
    /// SELECT pg_advisory_xact_lock(74118002, hashtext(coalesce(current_schema(), '')))
    /// ```
    public var migrationLock: SQLStatement? {
        dialect.advisoryLock(Self.migrationLockKey).map { SQLStatement(sql: $0) }
    }

    /// The statement that makes transactions creating tables take turns until they end: a
    /// transaction-scoped advisory lock of the current schema on PostgreSQL, where two
    /// `CREATE TABLE IF NOT EXISTS` of one table at once collide on the catalog
    /// (`pg_type_typname_nsp_index`); `nil` on SQLite, where ``begin`` holds the database's only
    /// write lock already.
    ///
    /// ```sql
    /// SELECT pg_advisory_xact_lock(74118003, hashtext(coalesce(current_schema(), '')))
    /// ```
    public var tableCreationLock: SQLStatement? {
        dialect.advisoryLock(Self.tableCreationLockKey).map { SQLStatement(sql: $0) }
    }

    /// The statements that suspend an engine's enforcement of foreign keys for one transaction,
    /// as SQLite's procedure for rebuilding a table asks; `nil` on PostgreSQL, which rebuilds no
    /// table and always enforces them.
    ///
    /// ```sql
    /// PRAGMA foreign_keys                              -- enforced: 1 or 0
    /// PRAGMA foreign_keys = OFF                        -- before BEGIN (no effect inside)
    /// SELECT count(*) FROM pragma_foreign_key_check    -- references naming no row
    /// PRAGMA foreign_keys = ON                         -- after COMMIT or ROLLBACK
    /// ```
    public var foreignKeySuspension: ForeignKeySuspension? {
        dialect.foreignKeySuspension
    }

    /// See ``SQLRenderer/foreignKeySuspension``.
    public struct ForeignKeySuspension: Sendable, Hashable {
        /// Reads whether the connection enforces foreign keys (`1` or `0`).
        public var enforced: SQLStatement
        /// Stops enforcing them (outside a transaction, where the setting takes effect).
        public var suspend: SQLStatement
        /// Counts the rows whose foreign keys name no row.
        public var danglingReferences: SQLStatement
        /// Enforces them again.
        public var resume: SQLStatement
    }

    /// The advisory-lock keys Depot takes on PostgreSQL (arbitrary, fixed, Depot's own).
    static let tableCreationLockKey = 74_118_003
    static let migrationLockKey = 74_118_002
    static let setupLockKey = 74_118_001
}
