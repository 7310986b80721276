import Depot
import Synchronization

/// What the writer of an open transaction keeps, the same for every SQL store: whether it is
/// still usable, the tables it wrote (announced on commit) and created (remembered on commit),
/// and its savepoints.
final class WriterBookkeeping: Sendable {
    /// The tables written and created up to a savepoint, restored when it rolls back.
    struct Mark: Sendable {
        let touched: Set<String>
        let touchedAnything: Bool
        let created: Set<TableDescription>
    }

    /// What a transaction wrote, as its commit announces it.
    struct Written: Sendable {
        /// The tables Depot's own calls wrote.
        var touched: Set<String>
        /// Whether a hand-written statement ran: it may have written any table.
        var touchedAnything: Bool
        var created: Set<TableDescription>

        /// The commit's announcement.
        var commit: StoreCommit {
            touchedAnything ? StoreCommit.anythingMayHaveChanged.adding(touched) : StoreCommit(tables: touched)
        }
    }

    private struct State {
        var isActive = true
        /// Why the transaction can no longer commit (a failed call that could not be undone).
        var broken: DepotError?
        var touched: Set<String> = []
        var touchedAnything = false
        var created: Set<TableDescription> = []
        var savepoints = 0
    }
    private let state = Mutex(State())

    init() {}

    /// Ends the transaction: later calls throw. Returns the tables written and created.
    @discardableResult
    func end() -> Written {
        state.withLock { state in
            state.isActive = false
            return Written(touched: state.touched, touchedAnything: state.touchedAnything, created: state.created)
        }
    }

    /// Throws `.transaction` once the transaction has ended.
    func checkActive() throws {
        try state.withLock { state in
            guard state.isActive else {
                throw DepotError(.transaction, "the transaction was used after it ended")
            }
            if let broken = state.broken { throw broken }
        }
    }

    /// Marks the transaction as one that must not commit: every later call, and the commit,
    /// throw `error`.
    func breakTransaction(_ error: DepotError) {
        state.withLock { state in
            if state.broken == nil { state.broken = error }
        }
    }

    /// Why the transaction must not commit, if it must not.
    var broken: DepotError? { state.withLock { $0.broken } }

    func touched(_ table: String) {
        state.withLock { _ = $0.touched.insert(table) }
    }

    /// A hand-written statement ran: it may have written any table, so the commit tells every
    /// observer to read again.
    func touchedAnything() {
        state.withLock { $0.touchedAnything = true }
    }

    func created(_ table: TableDescription) {
        state.withLock { _ = $0.created.insert(table) }
    }

    func hasCreated(_ table: TableDescription) -> Bool {
        state.withLock { $0.created.contains(table) }
    }

    /// A new savepoint's name (`depot_1`, `depot_2`, …) and the mark to restore if it rolls back.
    func savepoint() -> (name: String, mark: Mark) {
        state.withLock { state in
            state.savepoints += 1
            return (
                "depot_\(state.savepoints)",
                Mark(touched: state.touched, touchedAnything: state.touchedAnything, created: state.created)
            )
        }
    }

    /// Forgets what was written and created since `mark`'s savepoint.
    func rollBack(to mark: Mark) {
        state.withLock { state in
            state.touched = mark.touched
            state.touchedAnything = mark.touchedAnything
            state.created = mark.created
        }
    }
}
