/// One named step of a schema's history: operations that run, with its ledger row, in one
/// transaction — all of them or none.
///
/// ```swift
/// let migrations = Migrations([
///     Migration("1 airports", [.createTable(AirportV1.self)]),
///     Migration("2 elevation", [.addColumn("elevation", .double, to: "airports", default: .double(0))]),
///     Migration("3 country index", [.createIndex("airports_country", on: "airports", columns: ["country"])]),
///     Migration("4 feet", [.data("feet to metres") { tx in
///         let airports = tx.repository(AirportV2.self)
///         for var airport in try await airports.fetchAll() {
///             airport.elevation *= 0.3048
///             try await airports.upsert(airport)
///         }
///     }], down: .irreversible),
/// ])
/// try await store.migrate(migrations)  // applies what the database lacks, step by step
/// ```
///
/// A step's `down` is derived when every operation can be undone (an added column is dropped, a
/// rename is renamed back, a created index or table is dropped); give it explicitly otherwise,
/// or mark the step ``Down/irreversible``.
public struct Migration: Sendable {
    /// How a step is undone.
    public enum Down: Sendable {
        /// The inverse of each operation, in reverse order; irreversible when one has none.
        case automatic
        /// These operations.
        case operations([MigrationOperation])
        /// The step cannot be undone: migrating below it fails.
        case irreversible
    }

    /// The step's name, unique in its list; recorded in the database's ledger.
    public var name: String
    /// What the step does, in order.
    public var operations: [MigrationOperation]
    /// How it is undone.
    public var down: Down

    public init(_ name: String, _ operations: [MigrationOperation], down: Down = .automatic) {
        self.name = name
        self.operations = operations
        self.down = down
    }

    /// The operations that undo this step, or nil when it is irreversible.
    public var downOperations: [MigrationOperation]? {
        switch down {
        case .irreversible: return nil
        case .operations(let operations): return operations
        case .automatic:
            var inverse: [MigrationOperation] = []
            for operation in operations.reversed() {
                guard let undo = operation.inverse else { return nil }
                inverse.append(undo)
            }
            return inverse
        }
    }

    /// A fingerprint of the step's definition (its name and each operation's description), kept
    /// in the ledger: a step edited after it was applied is detected when the database opens.
    /// Data operations contribute their label, not their code.
    public var checksum: String {
        var text = name
        for operation in operations { text += "\n" + operation.description }
        if let down = downOperations {
            for operation in down { text += "\n- " + operation.description }
        }
        return Checksum.fnv1a64(text)
    }
}

/// The ordered steps of a schema's history; version *k* means the first *k* are applied.
public struct Migrations: Sendable {
    public var steps: [Migration]

    /// - Precondition: step names are unique.
    public init(_ steps: [Migration]) {
        precondition(Set(steps.map(\.name)).count == steps.count, "Migrations: step names must be unique")
        self.steps = steps
    }

    /// The version a database reaches with every step applied.
    public var latestVersion: Int { steps.count }
}

/// A step recorded in a database's ledger.
public struct AppliedMigration: Sendable, Hashable {
    /// The step's position: version `position` is reached when it is applied.
    public var version: Int
    public var name: String
    public var checksum: String

    public init(version: Int, name: String, checksum: String) {
        self.version = version
        self.name = name
        self.checksum = checksum
    }
}

/// Progress of a migration, for a progress bar: `done` of `total` steps, and the step just finished.
public struct MigrationProgress: Sendable, Hashable {
    public var done: Int
    public var total: Int
    public var step: String

    public init(done: Int, total: Int, step: String) {
        self.done = done
        self.total = total
        self.step = step
    }
}

/// What `migrate` did.
public struct MigrationOutcome: Sendable, Hashable {
    /// The database's version before and after.
    public var from: Int
    public var to: Int
    /// Steps this call applied (or reverted, going down), in the order it did so.
    public var steps: [String]

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
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/migration`` naming the step.
    /// Call it through ``migrate(_:to:progress:)``, which gives the defaults.
    func applyMigrations(
        _ migrations: Migrations, to target: Int?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome

    /// The steps the database's ledger records, in order (empty for a new database).
    func appliedMigrations() async throws -> [AppliedMigration]

    /// Compares the stored tables with the schemas of `entities` (tables, columns, types,
    /// nullability, primary keys) and fails with one message listing every difference, entity by
    /// entity. Call it after ``migrate(_:to:progress:)`` with the entities the app uses.
    ///
    /// - Throws: ``DepotError`` of kind ``DepotError/Kind/schemaMismatch``.
    func checkSchema(of entities: [any Entity.Type]) async throws

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
    @discardableResult
    public func open(
        _ migrations: Migrations, entities: [any Entity.Type], onSchemaChange policy: SchemaChangePolicy = .fail,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> MigrationOutcome {
        try RelationDescriptor.validate(entities)
        func migrateAndCheck() async throws -> MigrationOutcome {
            let outcome = try await applyMigrations(migrations, to: nil, progress: progress)
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
    @discardableResult
    public func migrate(
        _ migrations: Migrations, to target: Int? = nil, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) async throws -> MigrationOutcome {
        try await applyMigrations(migrations, to: target, progress: progress)
    }
}

extension DepotError {
    /// Whether the error says the database no longer fits the app — its ledger names other
    /// steps, or its tables differ — rather than that something failed on the way (a busy
    /// database, a lost connection, a step's own error): only then may development erase it.
    var meansSchemaChanged: Bool {
        kind == .schemaMismatch || (kind == .migration && underlying == nil)
    }
}

extension DepotError.Kind {
    /// A migration step failed, or the database's history does not match the steps given.
    public static let migration = DepotError.Kind(name: "migration")
}

/// 64-bit FNV-1a, as lowercase hex: a stable fingerprint (not a security hash).
enum Checksum {
    static func fnv1a64(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
