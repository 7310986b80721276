/// The live results of a query with row-level diffs (see
/// ``Repository/changes(where:orderBy:limit:timing:)``).
///
/// ```swift
/// for try await change in airports.changes(where: \.country == "NO") {
///     print(change.inserted, change.removed, change.updated)
/// }
/// ```
public struct QueryChanges<Root: Entity>: AsyncSequence, Sendable {
    /// A new result and its diff against the previous one.
    public typealias Element = ResultChange<Root>
    let source: Result<(any Store, SelectQuery), any Error>
    let timing: ObservationTiming

    /// A new observation: it registers with the store's commits now, and its first element holds
    /// the result when first asked for, every row inserted. Each iterator observes on its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(state: source.map { ObservationState<Root>(store: $0.0, query: $0.1, timing: timing) })
    }

    /// One observation of the query; it ends (and releases its registration) when it is released.
    public struct Iterator: AsyncIteratorProtocol {
        let state: Result<ObservationState<Root>, any Error>

        /// The whole current result first, then the next change, waiting for a commit that
        /// touches the query's tables (commits that leave the result as it was emit nothing);
        /// `nil` when the task is cancelled or the store's commit stream ends.
        ///
        /// - Throws: ``DepotError`` of kind `.invalidQuery` when the repository belongs to a
        ///   ``Transaction``, or whatever running the query throws (see ``Repository``).
        public mutating func next() async throws -> ResultChange<Root>? {
            try await state.get().next()
        }
    }
}
