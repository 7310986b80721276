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
        let target = target ?? migrations.latestVersion
        guard (0...migrations.latestVersion).contains(target) else {
            throw DepotError(
                .migration,
                "cannot migrate to version \(target): the steps given reach versions 0 to "
                    + "\(migrations.latestVersion)")
        }
        defer { store.schemaChanged() }
        let start = try await ledgerRows(on: store, checkedAgainst: migrations).count
        var done: [String] = []
        let total = abs(target - start)
        if start < target {
            for version in (start + 1)...target {
                let step = migrations.steps[version - 1]
                if try await run(step, version: version, up: true, migrations: migrations, on: store) {
                    done.append(step.name)
                }
                progress?(MigrationProgress(done: version - start, total: total, step: step.name))
            }
        } else if start > target {
            for version in stride(from: start, to: target, by: -1) {
                let step = migrations.steps[version - 1]
                if try await run(step, version: version, up: false, migrations: migrations, on: store) {
                    done.append(step.name)
                }
                progress?(MigrationProgress(done: start - version + 1, total: total, step: step.name))
            }
        }
        return MigrationOutcome(from: start, to: target, steps: done)
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
        func table<Root: Entity>(_ entity: Root.Type) -> TableDescription { Root.schema.table }
        var problems: [String] = []
        for entity in entities {
            let description = table(entity)
            do {
                if try await !store.verifyTable(description) {
                    problems.append("table '\(description.name)' of \(description.entityName) does not exist")
                }
            } catch let error as DepotError where error.kind == .schemaMismatch {
                problems.append(error.message)
            }
        }
        guard problems.isEmpty else {
            throw DepotError(
                .schemaMismatch,
                "the database does not match the app's entities (\(problems.count) table(s)): "
                    + problems.joined(separator: "; "))
        }
    }

    package static func applied(on store: some Store) async throws -> [AppliedMigration] {
        try await store.transaction { writer in
            try await readLedger(try session(writer))
        }
    }

    /// The ledger, checked against `migrations` (nothing is modified when it does not match).
    static func ledgerRows(on store: some Store, checkedAgainst migrations: Migrations) async throws
        -> [AppliedMigration]
    {
        try await store.transaction { writer in
            let rows = try await readLedger(try session(writer))
            try check(rows, against: migrations)
            return rows
        }
    }

    /// Applies (or reverts) one step with its ledger row in one transaction, after taking the
    /// migration lock and reading the ledger again: a step another process applied meanwhile is
    /// skipped (returns false).
    static func run(
        _ step: Migration, version: Int, up: Bool, migrations: Migrations, on store: some Store
    ) async throws -> Bool {
        do {
            return try await store.transaction { writer in
                let session = try session(writer)
                try await session.lockForMigration()
                try await ensureLedger(session)
                let rows = try await readLedger(session)
                try check(rows, against: migrations)
                if up {
                    guard rows.count == version - 1 else { return false }
                    for operation in step.operations { try await apply(operation, session, writer) }
                    let dialect = session.dialect
                    try await session.execute(
                        SQLStatement(
                            sql: "INSERT INTO \(dialect.quote(ledger)) (\"version\", \"name\", \"checksum\") VALUES ("
                                + "\(dialect.placeholder(1)), \(dialect.placeholder(2)), \(dialect.placeholder(3)))",
                            arguments: [.integer(Int64(version)), .text(step.name), .text(step.checksum)]))
                } else {
                    guard rows.count == version else { return false }
                    guard let down = step.downOperations else {
                        throw DepotError(
                            .migration, "step \(version) '\(step.name)' is irreversible: cannot migrate below it")
                    }
                    for operation in down { try await apply(operation, session, writer) }
                    try await session.execute(
                        SQLStatement(
                            sql: "DELETE FROM \(session.dialect.quote(ledger)) WHERE \"version\" = "
                                + session.dialect.placeholder(1), arguments: [.integer(Int64(version))]))
                }
                return true
            }
        } catch let error as DepotError where error.kind == .migration {
            throw error
        } catch {
            let reason = (error as? DepotError)?.message ?? "\(error)"
            throw DepotError(
                .migration,
                "step \(version) '\(step.name)' failed\(up ? "" : " going down"); the database stays at version "
                    + "\(up ? version - 1 : version): \(reason)", underlying: error)
        }
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

    static func check(_ rows: [AppliedMigration], against migrations: Migrations) throws {
        for (index, row) in rows.enumerated() {
            guard row.version == index + 1 else {
                throw DepotError(
                    .migration, "the migration ledger is damaged: version \(row.version) at position \(index + 1)")
            }
            guard index < migrations.steps.count else {
                throw DepotError(
                    .migration,
                    "the database is at version \(rows.count), newer than this app's \(migrations.latestVersion) "
                        + "(it records step \(row.version) '\(row.name)', unknown here); nothing was changed")
            }
            let step = migrations.steps[index]
            guard step.name == row.name else {
                throw DepotError(
                    .migration,
                    "step \(row.version) is '\(row.name)' in the database but '\(step.name)' in the app; nothing was changed"
                )
            }
            guard step.checksum == row.checksum else {
                throw DepotError(
                    .migration,
                    "step \(row.version) '\(step.name)' changed after it was applied (checksum \(row.checksum) in the "
                        + "database, \(step.checksum) now); nothing was changed")
            }
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
