/// Progress of a migration, for a progress bar: `done` of `total` steps, and the step just
/// finished — or, while a step works through rows, how far it is.
///
/// ```swift
/// try await store.migrate(migrations) { progress in
///     if let rows = progress.rows {
///         print("  \(progress.step): \(rows.done) of \(rows.total) rows")
///     } else {
///         print("\(progress.done)/\(progress.total): \(progress.step)")
///     }
/// }
/// ```
///
/// Reported after each step, also for a step another process applied meanwhile (``rows`` `nil`).
/// While a data step reads rows in ``Repository/batches(of:where:)``, reported after each batch
/// too, with ``rows`` set and ``done`` the steps finished before it; the total is counted once,
/// when the loop starts, and only when someone listens. A step that creates a search index over
/// rows already there reports the same way: SQLite's after each batch of the build, PostgreSQL's
/// as another connection follows its one `CREATE INDEX`, and all rows when it ends.
public struct MigrationProgress: Sendable, Hashable {
    /// How many steps this call has finished (applied, reverted or found applied), from 1.
    public var done: Int
    /// How many steps this call goes through: the distance between the database's version and
    /// the target.
    public var total: Int
    /// The name of the step just finished, or of the step under way when ``rows`` is set.
    public var step: String
    /// While a step works through rows in batches: how many it has read, of how many; `nil` in
    /// the report of a finished step.
    public var rows: Rows?

    /// Rows a step has worked through, of the rows its batches loop reads.
    public struct Rows: Sendable, Hashable {
        /// Rows read so far.
        public var done: Int
        /// Rows the loop reads: those its filter matched when it started (at least ``done``).
        public var total: Int

        /// `done` rows of `total`.
        public init(done: Int, total: Int) {
            self.done = done
            self.total = total
        }
    }

    /// Progress of `done` steps out of `total`, `step` being the last one finished (or, with
    /// `rows`, the one under way).
    public init(done: Int, total: Int, step: String, rows: Rows? = nil) {
        self.done = done
        self.total = total
        self.step = step
        self.rows = rows
    }
}

/// Where a batches loop inside a migration step reports the rows it read: set by the migration
/// runner for the step's duration, when the caller asked for progress.
package enum MigrationRowReporting {
    /// The reporter, wrapped: a task-local holding an optional `@Sendable` closure itself
    /// crashes optimized builds of Swift 6.3.1 (`withValue` of such an optional segfaults at
    /// `-O`; a struct around the closure does not).
    package struct Reporter: Sendable {
        let report: @Sendable (_ done: Int, _ total: Int) -> Void
    }

    @TaskLocal package static var reporter: Reporter?

    /// The running data step's row reporter, if progress is being reported.
    package static var report: (@Sendable (_ done: Int, _ total: Int) -> Void)? { reporter?.report }
}
