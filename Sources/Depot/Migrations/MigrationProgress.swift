/// Progress of a migration, for a progress bar: `done` of `total` steps, and the step just finished.
///
/// ```swift
/// try await store.migrate(migrations) { progress in
///     print("\(progress.done)/\(progress.total): \(progress.step)")
/// }
/// ```
///
/// Reported after each step, also for a step another process applied meanwhile.
public struct MigrationProgress: Sendable, Hashable {
    /// How many steps this call has finished (applied, reverted or found applied), from 1.
    public var done: Int
    /// How many steps this call goes through: the distance between the database's version and
    /// the target.
    public var total: Int
    /// The name of the step just finished.
    public var step: String

    /// Progress of `done` steps out of `total`, `step` being the last one.
    public init(done: Int, total: Int, step: String) {
        self.done = done
        self.total = total
        self.step = step
    }
}
