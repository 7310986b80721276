import Depot
import Synchronization

/// What the writer of an open transaction keeps, the same for every SQL store: whether it is
/// still usable, the tables it wrote (announced on commit) and created (remembered on commit),
/// and its savepoints.
final class WriterBookkeeping: Sendable {
    /// The tables written and created up to a savepoint, restored when it rolls back.
    struct Mark: Sendable {
        let touched: WrittenRows
        let touchedAnything: Bool
        let created: Set<TableDescription>
    }

    /// What a transaction wrote, as its commit announces it.
    struct Written: Sendable {
        /// The tables (and rows) Depot's own calls wrote.
        var touched: WrittenRows
        /// Whether a hand-written statement ran: it may have written any table.
        var touchedAnything: Bool
        var created: Set<TableDescription>

        /// The commit's announcement.
        var commit: StoreCommit {
            touched.commit(anything: touchedAnything)
        }
    }

    private struct State {
        var isActive = true
        /// Why the transaction can no longer commit (a failed call that could not be undone).
        var broken: DepotError?
        var touched = WrittenRows()
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

    /// `rows` were written into `table`.
    func touched(_ table: TableDescription, rows: RowBatch, keyPositions: [Int]) {
        state.withLock { $0.touched.wrote(rows, into: table, keyPositions: keyPositions) }
    }

    /// The rows `update` matched were updated.
    func touched(_ update: UpdateQuery) {
        state.withLock { $0.touched.wrote(update) }
    }

    /// Rows of `table` matching `predicate` were deleted.
    func touched(_ table: TableDescription, where predicate: PredicateNode?) {
        state.withLock { $0.touched.wrote(table, where: predicate) }
    }

    /// A hand-written statement ran: it may have written any table, so the commit tells every
    /// observer to read again.
    func touchedAnything() {
        state.withLock { $0.touchedAnything = true }
    }

    /// The tables Depot's own calls wrote so far, and whether a hand-written statement ran.
    var written: (tables: Set<String>, anything: Bool) {
        state.withLock { ($0.touched.tables, $0.touchedAnything) }
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
