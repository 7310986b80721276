import Depot
import Foundation
import Logging

/// A SQL store's transaction as migrations use it: raw statements and text rows on the
/// transaction's connection, next to the ordinary writer for data steps.
package protocol SQLMigrationSession: StoreWriter {
    var dialect: any SQLDialect { get }
    /// Runs one statement (no rows).
    func execute(_ statement: SQLStatement) async throws
    /// Runs a script of statements as the engine splits it.
    func executeScript(_ sql: String) async throws
    /// The rows of a query, each column read as text (NULL as nil).
    func texts(_ statement: SQLStatement) async throws -> [[String?]]
    /// The rows of a query on another connection to the server this transaction writes to
    /// (never a replica), outside this transaction, each column read as text (to follow what a
    /// statement of this one does meanwhile).
    func textsElsewhere(_ statement: SQLStatement) async throws -> [[String?]]
    /// Holds the database's migration lock until the transaction ends.
    func lockForMigration() async throws
    /// Has the engine adopt a table the step created (``SQLEngine/adopt(_:on:)``: PostgreSQL's
    /// commit trigger), so its commits are announced from the start, whoever writes them.
    func adopt(_ table: TableDescription) async throws
}

extension SQLMigrationSession {
    func execute(_ sql: String) async throws { try await execute(SQLStatement(sql: sql, arguments: [])) }
}

extension SQLStore: MigratableStore, MigrationTransactions {
    /// Applies `migrations` through Depot's one migration driver: the ledger is the table
    /// `depot_migrations` (version, name, checksum), each step runs in one transaction with its
    /// ledger row, under the migration lock (an advisory lock on PostgreSQL; on SQLite the write
    /// lock `BEGIN IMMEDIATE` takes).
    ///
    /// The store forgets which tables it checked afterwards, even when a step fails, so their
    /// new shape is checked on next use.
    ///
    /// - Throws: `DepotError` of kind `.migration` (see
    ///   `MigratableStore.applyMigrations(_:to:progress:)`).
    public func applyMigrations(
        _ migrations: Migrations, to target: Int?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome {
        defer { schemaChanged() }
        let logger = instruments.logging.logger
        try await upgradeSearchIndexes()
        let outcome = try await MigrationRunner.migrate(
            migrations, to: target, on: self,
            progress: { step in
                if step.rows == nil { logger.info("migration step \(step.done) of \(step.total): \(step.step)") }
                progress?(step)
            }, reportingRows: progress != nil)
        logger.info(
            "migrated from version \(outcome.from) to \(outcome.to)",
            metadata: ["steps": .array(outcome.steps.map { .string($0) })])
        return outcome
    }

    /// Builds again, in the current form, the search indexes a Depot version before FTS5
    /// (SQLite) or the GIN index (PostgreSQL) made (word tables,
    /// ``SQLDialect/legacySearchIndexes``), in one transaction under the
    /// migration lock: a search reads only the current form.
    private func upgradeSearchIndexes() async throws {
        guard let legacy = renderer.dialect.legacySearchIndexes else { return }
        try await engine.prepare()
        let found = try await withReader { try await $0.rows(legacy).rows }
        guard !found.isEmpty else { return }
        try await withWriter { session in
            try await session.lockForMigration()
            for row in try await session.texts(legacy) {
                guard let name = row.first ?? nil, let index = SearchIndexName.parts(of: name, suffix: "#words")
                else { continue }
                try await SQLMigrator.rebuildSearchIndex(of: index.table, index.column, session)
            }
        }
        instruments.logging.logger.info(
            "search indexes rebuilt in their current form", metadata: ["count": "\(found.count)"])
    }

    /// The rows of the `depot_migrations` ledger, in version order; empty when the table does not
    /// exist.
    public func appliedMigrations() async throws -> [AppliedMigration] {
        try await FreshReads.run { try await MigrationRunner.applied(on: self) }
    }

    /// Compares each entity's table, as the engine's catalog describes it, with its schema: column
    /// names, types, nullability and primary key (PostgreSQL's folded copies included).
    ///
    /// - Throws: `DepotError` of kind `.schemaMismatch` listing every table that is missing or
    ///   differs.
    public func checkSchema(of entities: [any Entity.Type]) async throws {
        try await FreshReads.run {
            try await SchemaComparison.check(entities) { table in
                try await self.engine.prepare()
                return try await self.withReader { connection in
                    try await self.prepareTable(table, on: connection, create: false) != .missing
                }
            }
        }
    }

    /// The table named `name` as the database's catalog describes it, or `nil`.
    public func storedTable(_ name: String) async throws -> StoredTable? {
        try await engine.prepare()
        let dialect = renderer.dialect
        return try await FreshReads.run { try await self.storedTable(name, dialect: dialect) }
    }

    private func storedTable(_ name: String, dialect: any SQLDialect) async throws -> StoredTable? {
        try await withReader { connection in
            let columns = try await connection.catalogColumns(of: name, self.renderer)
            guard !columns.isEmpty else { return nil }
            let kept = columns.filter { !SchemaDrift.isLegacyFoldedCopy($0.name, in: columns) }
            return StoredTable(
                name: name,
                columns: kept.map {
                    StoredTable.Column(
                        name: $0.name, type: ColumnType(rawValue: dialect.depotTypeName(fromCatalog: $0.type)),
                        typeName: $0.type, isNullable: !$0.isNotNull, hasDefault: $0.defaultSQL != nil)
                },
                primaryKey: kept.filter { $0.keyPosition > 0 }.sorted { $0.keyPosition < $1.keyPosition }.map(\.name),
                indexes: try await connection.catalogIndexes(of: name, self.renderer))
        }
    }

    /// Drops every table of the database (the ledger too), under the migration lock.
    public func eraseDatabase() async throws {
        defer { schemaChanged() }
        try await withWriter { session in
            try await session.lockForMigration()
            for row in try await session.texts(session.renderer.catalogTables) {
                guard let name = row.first ?? nil else { continue }
                try await session.execute(session.renderer.eraseTable(name))
            }
            // Functions of search indexes outlive their tables (PostgreSQL): drop them too, so the
            // database is as new and an index created again finds no function in its way.
            if let leftovers = session.renderer.searchIndexFunctions {
                for row in try await session.texts(leftovers) {
                    guard let function = row.first ?? nil else { continue }
                    try await session.execute(session.renderer.dropFunction(function))
                }
            }
        }
    }

    /// A migration transaction; one that `rebuildsTables` runs with the engine's enforcement of
    /// foreign keys suspended (SQLite: `PRAGMA foreign_keys = OFF` before `BEGIN`, as SQLite's
    /// own procedure for changing a table asks, so that dropping the old table cascades nowhere),
    /// and fails before committing if the step left a reference dangling that held before.
    package func withMigrationSession<T: Sendable>(
        rebuildsTables: Bool, _ body: @Sendable (SQLWriter<Engine>) async throws -> T
    ) async throws -> T {
        try await withWriter(suspendingForeignKeys: rebuildsTables, body)
    }
}

/// The ledger of applied migrations, the same table on every SQL store.
enum SQLMigrator {
    static let ledger = SQLRenderer.ledger

    static func ensureLedger(_ session: any SQLMigrationSession) async throws {
        try await session.execute(SQLRenderer(dialect: session.dialect).createLedger)
    }

    static func readLedger(_ session: any SQLMigrationSession) async throws -> [AppliedMigration] {
        let renderer = SQLRenderer(dialect: session.dialect)
        let exists = try await session.texts(renderer.catalogTableExists(ledger))
        guard exists.first?.first.flatMap({ $0 }).flatMap({ Int($0) }) ?? 0 > 0 else { return [] }
        return try await session.texts(renderer.readLedger).map { row in
            AppliedMigration(version: Int(row[0] ?? "") ?? 0, name: row[1] ?? "", checksum: row[2] ?? "")
        }
    }
}

extension SQLWriter: MigrationSession {
    package func readLedger() async throws -> [AppliedMigration] { try await SQLMigrator.readLedger(self) }

    package func record(_ step: Migration, version: Int) async throws {
        try await SQLMigrator.ensureLedger(self)
        try await execute(renderer.recordMigration(version: version, name: step.name, checksum: step.checksum))
    }

    package func unrecord(version: Int) async throws {
        try await execute(renderer.unrecordMigration(version: version))
    }

    package func apply(_ operation: MigrationOperation) async throws {
        try await SQLMigrator.apply(operation, self, self)
    }
}
