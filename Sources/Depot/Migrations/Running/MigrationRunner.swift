/// What a store gives migrations inside one of its transactions: the ledger, the lock, and each
/// operation carried out in its own terms.
package protocol MigrationSession: Sendable {
    /// Holds the database's migration lock until the transaction ends.
    func lockForMigration() async throws
    /// The ledger's rows, in version order (empty when there is no ledger yet).
    func readLedger() async throws -> [AppliedMigration]
    /// Records that `step` was applied as `version` (creating the ledger when needed).
    func record(_ step: Migration, version: Int) async throws
    /// Removes the ledger row of `version`.
    func unrecord(version: Int) async throws
    /// Carries out one operation.
    func apply(_ operation: MigrationOperation) async throws
}

/// A store's transactions as migrations run them: each one hands the store's own
/// ``MigrationSession``, typed, so no store has to downcast a writer to reach its session.
package protocol MigrationTransactions: Sendable {
    associatedtype Session: MigrationSession
    /// Runs `body` in one transaction of the store, with the session on it.
    ///
    /// `rebuildsTables` says the transaction may rebuild tables (a column's type changes): a store
    /// whose engine rebuilds a table by dropping it (SQLite) must keep the drop from acting on other
    /// tables, and check before committing that every reference still holds.
    func withMigrationSession<T: Sendable>(
        rebuildsTables: Bool, _ body: @Sendable (Session) async throws -> T
    ) async throws -> T
}

extension MigrationTransactions {
    /// Runs `body` in one transaction of the store that rebuilds no table.
    func withMigrationSession<T: Sendable>(_ body: @Sendable (Session) async throws -> T) async throws -> T {
        try await withMigrationSession(rebuildsTables: false, body)
    }
}

/// Runs ``Migrations`` on any store that gives a ``MigrationSession``: the order, the ledger
/// checks, one transaction per step with the lock taken and the ledger read again under it.
/// The same driver for every store, so every store refuses, skips and reports alike.
package enum MigrationRunner {
    /// Brings `store` to `target`, reporting to `progress` after each step and, with
    /// `reportingRows`, after each batch a data step reads (``MigrationProgress/rows``; its total
    /// costs a count, so only when someone shows it).
    package static func migrate(
        _ migrations: Migrations, to target: Int?, on store: some MigrationTransactions,
        progress: (@Sendable (MigrationProgress) -> Void)?, reportingRows: Bool = true
    ) async throws -> MigrationOutcome {
        try migrations.checkNames()
        let target = target ?? migrations.latestVersion
        guard (0...migrations.latestVersion).contains(target) else {
            throw DepotError(
                .migration,
                "cannot migrate to version \(target): the steps given reach versions 0 to "
                    + "\(migrations.latestVersion)")
        }
        let start = try await store.withMigrationSession { session in
            let rows = splitAutomatic(try await session.readLedger()).listed
            try check(rows, against: migrations)
            return rows.count
        }
        var done: [String] = []
        let total = abs(target - start)
        if start < target {
            for version in (start + 1)...target {
                let step = migrations.steps[version - 1]
                var rows: MigrationRowReporting.Reporter?
                if let progress, reportingRows {
                    rows = MigrationRowReporting.Reporter { read, of in
                        progress(
                            MigrationProgress(
                                done: version - start - 1, total: total, step: step.name,
                                rows: MigrationProgress.Rows(done: read, total: of)))
                    }
                }
                let applied = try await MigrationRowReporting.$reporter.withValue(rows) {
                    try await run(step, version: version, up: true, migrations: migrations, on: store)
                }
                if applied { done.append(step.name) }
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

    /// The ledger as it stands.
    package static func applied(on store: some MigrationTransactions) async throws -> [AppliedMigration] {
        try await store.withMigrationSession { session in try await session.readLedger() }
    }

    /// Applies (or reverts) one step with its ledger row in one transaction, after taking the
    /// migration lock and reading the ledger again: a step another process applied meanwhile is
    /// skipped (returns false).
    static func run(
        _ step: Migration, version: Int, up: Bool, migrations: Migrations, on store: some MigrationTransactions
    ) async throws -> Bool {
        let operations = up ? step.operations : (step.downOperations ?? [])
        let rebuildsTables = operations.contains {
            if case .alterColumn = $0.action { true } else { false }
        }
        do {
            return try await store.withMigrationSession(rebuildsTables: rebuildsTables) { session in
                try await session.lockForMigration()
                let ledger = try await session.readLedger()
                let (rows, automatic) = splitAutomatic(ledger)
                try check(rows, against: migrations)
                if up {
                    guard rows.count == version - 1 else { return false }
                    if step.isAutomatic {
                        // Another automatic step: recorded after those already there.
                        try await apply(step.operations, session)
                        try await session.record(step, version: ledger.count + 1)
                        return true
                    }
                    // A listed step after automatic ones: their changes stay, their rows give way.
                    for row in automatic.reversed() { try await session.unrecord(version: row.version) }
                    try await apply(step.operations, session)
                    try await session.record(step, version: version)
                } else {
                    guard rows.count == version else { return false }
                    for row in automatic.reversed() { try await session.unrecord(version: row.version) }
                    guard let down = step.downOperations else {
                        throw DepotError(
                            .migration, "step \(version) '\(step.name)' is irreversible: cannot migrate below it")
                    }
                    try await apply(down, session)
                    try await session.unrecord(version: version)
                }
                return true
            }
        } catch let error as DepotError where error.kind == .migration {
            throw error  // the ledger's verdict, or an irreversible step: named already
        } catch let cancelled as CancellationError {
            throw cancelled
        } catch {
            let cause = (error as? OperationFailure)?.underlying ?? error
            let reason = (cause as? DepotError)?.message ?? "\(cause)"
            throw DepotError(
                .migration,
                "step \(version) '\(step.name)' failed\(up ? "" : " going down"); the database stays at version "
                    + "\(up ? version - 1 : version): \(reason)", underlying: cause)
        }
    }

    /// An operation's error, whatever its kind: the step that ran it is named around it.
    struct OperationFailure: Error {
        let underlying: any Error
    }

    static func apply(_ operations: [MigrationOperation], _ session: any MigrationSession) async throws {
        do {
            for operation in operations { try await session.apply(operation) }
        } catch {
            throw OperationFailure(underlying: error)
        }
    }

    /// The ledger's rows of listed steps, and the automatic steps recorded after them
    /// (``SchemaChangePolicy/applyAdditiveChanges``), which no list names.
    static func splitAutomatic(_ rows: [AppliedMigration]) -> (
        listed: [AppliedMigration], automatic: [AppliedMigration]
    ) {
        var end = rows.count
        while end > 0, rows[end - 1].name.hasPrefix(Migration.automaticPrefix) { end -= 1 }
        return (Array(rows[..<end]), Array(rows[end...]))
    }

    /// Throws unless `rows` are the first steps of `migrations`, unchanged.
    package static func check(_ rows: [AppliedMigration], against migrations: Migrations) throws {
        try migrations.checkNames()
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
}
