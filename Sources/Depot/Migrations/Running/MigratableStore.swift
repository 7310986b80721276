/// A step recorded in a database's ledger.
public struct AppliedMigration: Sendable, Hashable {
    /// The step's position, from 1: the database is at this version once the step is applied.
    public var version: Int
    /// The step's name, as given to ``Migration/init(_:_:down:)``.
    public var name: String
    /// The step's ``Migration/checksum`` when it was applied.
    public var checksum: String

    /// A ledger row for step `version`.
    public init(version: Int, name: String, checksum: String) {
        self.version = version
        self.name = name
        self.checksum = checksum
    }
}

/// What `migrate` did.
public struct MigrationOutcome: Sendable, Hashable {
    /// The database's version before the call.
    public var from: Int
    /// The database's version after the call: the target.
    public var to: Int
    /// Steps this call applied (or reverted, going down), in the order it did so; steps another
    /// process applied meanwhile are not listed.
    public var steps: [String]

    /// An outcome going from version `from` to `to` through `steps`.
    public init(from: Int, to: Int, steps: [String]) {
        self.from = from
        self.to = to
        self.steps = steps
    }
}

/// A store whose schema evolves through ``Migrations``.
public protocol MigratableStore: Store {
    /// Brings the database to version `target` (every step when `nil`): steps missing from its
    /// ledger run in order, each with its ledger row in one transaction; going down reverts
    /// applied steps, last first. Concurrent callers (other processes included) apply each step
    /// once. A ledger holding steps this list does not know (a database from a newer app), or a
    /// step whose definition changed since it was applied, fails before anything is modified.
    ///
    /// Call it through ``migrate(_:to:progress:)``, which gives the defaults.
    ///
    /// - Parameters:
    ///   - migrations: The whole history, oldest step first.
    ///   - target: The version to reach, from 0 to `migrations.latestVersion`; every step when `nil`.
    ///   - progress: Called after each step.
    /// - Returns: The versions before and after, and the steps this call ran.
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/migration``: when `target` is out of
    ///   range, the ledger does not match `migrations`, a step below `target` is irreversible, or a
    ///   step fails (naming it, with the cause as ``DepotError/underlying``; the database stays at
    ///   the last version reached).
    func applyMigrations(
        _ migrations: Migrations, to target: Int?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome

    /// The steps the database's ledger records, in order (empty for a new database).
    ///
    /// ```swift
    /// let version = try await store.appliedMigrations().count
    /// ```
    func appliedMigrations() async throws -> [AppliedMigration]

    /// Compares the stored tables with the schemas of `entities` (tables, columns, types,
    /// nullability, primary keys) and fails with one message listing every difference, entity by
    /// entity. Call it after ``migrate(_:to:progress:)`` with the entities the app uses.
    ///
    /// Stored columns an entity does not declare are accepted when they are nullable or have a
    /// default (rows written without them stay valid).
    ///
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/schemaMismatch`` listing every table
    ///   that is missing or differs.
    func checkSchema(of entities: [any Entity.Type]) async throws

    /// The table named `name` as the database holds it (columns, key, indexes), or `nil` when
    /// there is none: what ``proposeMigration(for:)`` compares with the entities.
    func storedTable(_ name: String) async throws -> StoredTable?

    /// Removes every table of the database, the ledger included: what
    /// ``open(_:entities:onSchemaChange:progress:)`` does before starting over under
    /// ``SchemaChangePolicy/eraseAndRecreate``. For development; the data is gone.
    func eraseDatabase() async throws
}

/// What ``MigratableStore/open(_:entities:onSchemaChange:progress:)`` does when the database does
/// not fit the app: its ledger names other steps, or its tables differ from the entities.
public enum SchemaChangePolicy: Sendable, Hashable {
    /// Fail with the error that names the difference, leaving the database as it is.
    case fail
    /// Erase the database and build it again from the first step: for development, while the
    /// schema is still changing every day. Never for data you want to keep.
    case eraseAndRecreate
    /// Apply purely additive changes by itself — a new table, a new optional column, a new
    /// index — after the listed steps, recorded in the ledger as a step named `auto: …`; fail on
    /// anything else (a dropped, renamed or retyped column, a new NOT NULL column) with the
    /// proposed steps, as Swift source, in the error's message.
    ///
    /// For apps whose schema grows by adding. The automatic steps are the database's own: when
    /// the app's list gains a step, their ledger rows give way to it (their changes stay), so a
    /// listed step must not repeat a change a database may have applied automatically.
    case applyAdditiveChanges
}

extension MigratableStore {
    /// Opens the database for an app: brings it to the latest version, then checks that the
    /// tables fit `entities` (columns, types, nullability, keys) and that their relations are
    /// declared soundly — so drift surfaces at launch, in one error listing every difference.
    ///
    /// ```swift
    /// let store = try SQLiteStore(path: "app.sqlite")
    /// try await store.open(migrations, entities: [Airport.self, Country.self])
    /// // while prototyping: start over whenever the steps or the entities changed
    /// try await store.open(migrations, entities: [Airport.self], onSchemaChange: .eraseAndRecreate)
    /// ```
    ///
    /// Under ``SchemaChangePolicy/eraseAndRecreate``, only errors saying the database no longer
    /// fits the app (a ledger naming other steps, tables that differ) erase it; a step that fails
    /// on the way, a busy database or a lost connection is thrown as it is.
    ///
    /// - Returns: What the migration did.
    /// - Throws: ``DepotError`` of kind `.invalidSchema` when a relation of `entities` is declared
    ///   wrongly (before anything runs), ``DepotError/Kind/migration`` as
    ///   ``applyMigrations(_:to:progress:)`` throws it, ``DepotError/Kind/schemaMismatch`` when
    ///   the tables then differ from `entities`.
    @discardableResult
    public func open(
        _ migrations: Migrations, entities: [any Entity.Type], onSchemaChange policy: SchemaChangePolicy = .fail,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> MigrationOutcome {
        try RelationDescriptor.validate(entities)
        func migrateAndCheck() async throws -> MigrationOutcome {
            var outcome = try await applyMigrations(migrations, to: nil, progress: progress)
            // Another store (another process) may apply the same changes meanwhile: its step
            // then fails here (a column that exists already) and a fresh proposal finds less to do.
            var attempt = 0
            while policy == .applyAdditiveChanges {
                attempt += 1
                let proposal = try await proposeMigration(for: entities)
                let needed = proposal.steps.filter { !$0.isOptional }
                if !needed.isEmpty {
                    guard needed.allSatisfy(\.isAdditive) else {
                        // A proposal read while another store's step committed can see half of it:
                        // look again before refusing.
                        if attempt < 5 { continue }
                        let version = try await appliedMigrations().count + 1
                        throw DepotError(
                            .schemaMismatch,
                            "the database differs from the entities in ways that are not purely additive; review "
                                + "these steps and add them to the app's migrations:\n"
                                + MigrationProposal(steps: needed).swiftSource(name: "\(version) …"))
                    }
                    let summary = needed.map(\.summary).joined(separator: ", ")
                    let step = Migration(Migration.automaticPrefix + summary, needed.compactMap(\.operation))
                    do {
                        let automatic = try await applyMigrations(
                            Migrations(migrations.steps + [step]), to: nil, progress: progress)
                        outcome.steps += automatic.steps
                    } catch let error as DepotError where error.kind == .migration && attempt < 5 {
                        continue
                    }
                }
                break
            }
            try await checkSchema(of: entities)
            return outcome
        }
        do {
            return try await migrateAndCheck()
        } catch let error as DepotError where policy == .eraseAndRecreate && error.meansSchemaChanged {
            try await eraseDatabase()
            return try await migrateAndCheck()
        }
    }
}

extension MigratableStore {
    /// Brings the database to the latest version (or `target`): steps missing from its ledger
    /// run in order, each with its ledger row in one transaction; going down reverts applied
    /// steps, last first. See ``applyMigrations(_:to:progress:)``.
    ///
    /// ```swift
    /// try await store.migrate(migrations)         // to the latest version
    /// try await store.migrate(migrations, to: 2)  // up or down to version 2
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/migration``, as
    ///   ``applyMigrations(_:to:progress:)`` throws it.
    @discardableResult
    public func migrate(
        _ migrations: Migrations, to target: Int? = nil, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> MigrationOutcome {
        try await applyMigrations(migrations, to: target, progress: progress)
    }
}
