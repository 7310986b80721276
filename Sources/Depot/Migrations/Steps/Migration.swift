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

    /// A step named `name` doing `operations`, in order.
    ///
    /// ```swift
    /// Migration("2 elevation", [.addColumn("elevation", .double, to: "airports", default: .double(0))])
    /// ```
    ///
    /// - Parameters:
    ///   - name: The step's name, unique among the steps and kept in the ledger: renaming a step
    ///     that was applied makes ``MigratableStore/migrate(_:to:progress:)`` refuse the database.
    ///   - operations: What the step does, in order, in one transaction.
    ///   - down: How the step is undone when migrating below it; derived by default.
    public init(_ name: String, _ operations: [MigrationOperation], down: Down = .automatic) {
        self.name = name
        self.operations = operations
        self.down = down
    }

    /// How the names of steps that ``SchemaChangePolicy/applyAdditiveChanges`` applied by
    /// itself begin; listed steps cannot be named so.
    public static let automaticPrefix = "auto: "

    /// Whether this is an automatic step (its name begins with ``automaticPrefix``).
    var isAutomatic: Bool { name.hasPrefix(Self.automaticPrefix) }

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
    /// The steps, oldest first: step *k* takes the database from version *k* − 1 to *k*.
    ///
    /// Append new steps; never edit, reorder or remove applied ones (their names and checksums
    /// are checked against the ledger).
    public var steps: [Migration]

    /// The history made of `steps`, oldest first.
    ///
    /// Step names must be unique: migrating with two steps of one name fails with `DepotError`
    /// of kind `.migration`, naming it, before anything runs.
    public init(_ steps: [Migration]) {
        self.steps = steps
    }

    /// Throws unless every step's name is unique.
    func checkNames() throws(DepotError) {
        var seen: Set<String> = []
        for step in steps where !seen.insert(step.name).inserted {
            throw DepotError(
                .migration, "two migration steps are named '\(step.name)': every step needs a name of its own")
        }
        for step in steps.dropLast() where step.isAutomatic {
            throw DepotError(
                .migration,
                "step '\(step.name)' begins with '\(Migration.automaticPrefix)', which names the steps Depot applies "
                    + "by itself: rename it")
        }
    }

    /// The version a database reaches with every step applied.
    public var latestVersion: Int { steps.count }
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
