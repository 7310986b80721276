import Depot
import Foundation

/// A SQL store's transaction as migrations use it: raw statements and text rows on the
/// transaction's connection, next to the ordinary writer for data steps.
package protocol SQLMigrationSession: StoreWriter {
    var dialect: SQLDialect { get }
    /// Runs one statement (no rows).
    func execute(_ statement: SQLStatement) async throws
    /// The rows of a query, each column read as text (NULL as nil).
    func texts(_ statement: SQLStatement) async throws -> [[String?]]
    /// Holds the database's migration lock until the transaction ends (PostgreSQL: an advisory
    /// lock; SQLite: the transaction is `BEGIN IMMEDIATE` already).
    func lockForMigration() async throws
}

/// A SQL store that migrations run on.
package protocol SQLMigratableStore: Store {
    /// Forgets which tables were checked: their shape may have changed.
    func schemaChanged()
    /// Whether `table` exists; throws `.schemaMismatch` listing differences when it differs.
    func verifyTable(_ table: TableDescription) async throws -> Bool
}

extension SQLMigrationSession {
    func execute(_ sql: String) async throws { try await execute(SQLStatement(sql: sql, arguments: [])) }
}

/// Runs ``Migrations`` on a SQL store: the ledger, the order, the locking and the DDL.
package enum SQLMigrator {
    static let ledger = "depot_migrations"

    package static func migrate(
        _ migrations: Migrations, to target: Int?, on store: some SQLMigratableStore,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome {
        defer { store.schemaChanged() }
        return try await MigrationRunner.migrate(
            migrations, to: target, on: store, sessions: { try SQLSessionAdapter(writer: $0) }, progress: progress)
    }

    /// Drops every table of the database (the ledger too), under the migration lock.
    package static func erase(on store: some SQLMigratableStore) async throws {
        defer { store.schemaChanged() }
        try await store.transaction { writer in
            let session = try session(writer)
            try await session.lockForMigration()
            let list: String
            switch session.dialect {
            case .sqlite: list = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            case .postgres: list = "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()"
            }
            for row in try await session.texts(SQLStatement(sql: list, arguments: [])) {
                guard let name = row.first ?? nil else { continue }
                let cascade = session.dialect == .postgres ? " CASCADE" : ""
                try await session.execute("DROP TABLE IF EXISTS \(session.dialect.quote(name))\(cascade)")
            }
        }
    }

    /// Checks every entity's table, gathering all differences into one error.
    package static func checkSchema(of entities: [any Entity.Type], on store: some SQLMigratableStore) async throws {
        try await SchemaComparison.check(entities, verify: store.verifyTable)
    }

    package static func applied(on store: some Store) async throws -> [AppliedMigration] {
        try await MigrationRunner.applied(on: store, sessions: { try SQLSessionAdapter(writer: $0) })
    }

    static func session(_ writer: any StoreWriter) throws -> any SQLMigrationSession {
        guard let session = writer as? any SQLMigrationSession else {
            throw DepotError(.migration, "this store's transactions cannot run migrations")
        }
        return session
    }

    static func ensureLedger(_ session: any SQLMigrationSession) async throws {
        let dialect = session.dialect
        try await session.execute(
            "CREATE TABLE IF NOT EXISTS \(dialect.quote(ledger)) (\"version\" \(dialect.typeName(.integer)) NOT NULL "
                + "PRIMARY KEY, \"name\" text NOT NULL, \"checksum\" text NOT NULL)")
    }

    static func readLedger(_ session: any SQLMigrationSession) async throws -> [AppliedMigration] {
        let dialect = session.dialect
        let exists = try await session.texts(tableExists(ledger, dialect))
        guard exists.first?.first.flatMap({ $0 }).flatMap({ Int($0) }) ?? 0 > 0 else { return [] }
        return try await session.texts(
            SQLStatement(
                sql: "SELECT CAST(\"version\" AS text), \"name\", \"checksum\" FROM \(dialect.quote(ledger)) "
                    + "ORDER BY \"version\"", arguments: [])
        ).map { row in
            AppliedMigration(version: Int(row[0] ?? "") ?? 0, name: row[1] ?? "", checksum: row[2] ?? "")
        }
    }

    static func tableExists(_ table: String, _ dialect: SQLDialect) -> SQLStatement {
        switch dialect {
        case .sqlite:
            SQLStatement(
                sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [.text(table)])
        case .postgres:
            SQLStatement(
                sql: "SELECT count(*)::text FROM information_schema.tables WHERE table_schema = current_schema() "
                    + "AND table_name = $1", arguments: [.text(table)])
        }
    }
}

/// A SQL transaction as the shared ``MigrationRunner`` sees it.
struct SQLSessionAdapter: MigrationSession {
    let session: any SQLMigrationSession
    let writer: any StoreWriter

    init(writer: any StoreWriter) throws {
        self.session = try SQLMigrator.session(writer)
        self.writer = writer
    }

    func lockForMigration() async throws { try await session.lockForMigration() }

    func readLedger() async throws -> [AppliedMigration] { try await SQLMigrator.readLedger(session) }

    func record(_ step: Migration, version: Int) async throws {
        try await SQLMigrator.ensureLedger(session)
        let dialect = session.dialect
        try await session.execute(
            SQLStatement(
                sql: "INSERT INTO \(dialect.quote(SQLMigrator.ledger)) (\"version\", \"name\", \"checksum\") VALUES ("
                    + "\(dialect.placeholder(1)), \(dialect.placeholder(2)), \(dialect.placeholder(3)))",
                arguments: [.integer(Int64(version)), .text(step.name), .text(step.checksum)]))
    }

    func unrecord(version: Int) async throws {
        try await session.execute(
            SQLStatement(
                sql: "DELETE FROM \(session.dialect.quote(SQLMigrator.ledger)) WHERE \"version\" = "
                    + session.dialect.placeholder(1), arguments: [.integer(Int64(version))]))
    }

    func apply(_ operation: MigrationOperation) async throws {
        try await SQLMigrator.apply(operation, session, writer)
    }
}
