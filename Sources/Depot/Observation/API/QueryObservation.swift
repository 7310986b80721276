/// The live results of a query: an `AsyncSequence` of arrays (see
/// ``Repository/observe(where:orderBy:limit:timing:)``).
///
/// ```swift
/// for try await list in airports.observe(where: \.country == "NO") { show(list) }
/// ```
public struct QueryObservation<Root: Entity>: AsyncSequence, Sendable {
    /// One complete result of the query, in its order.
    public typealias Element = [Root]
    let changes: QueryChanges<Root>

    /// A new observation: it registers with the store's commits now, and its first element is
    /// the result when first asked for. Each iterator observes on its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: changes.makeAsyncIterator())
    }

    /// One observation of the query; it ends (and releases its registration) when it is released.
    public struct Iterator: AsyncIteratorProtocol {
        var base: QueryChanges<Root>.Iterator

        /// The current result first, then the next result that differs, waiting for a commit that
        /// touches the query's tables; `nil` when the task is cancelled or the store's commit
        /// stream ends.
        ///
        /// - Throws: ``DepotError`` of kind `.invalidQuery` when the repository belongs to a
        ///   ``Transaction``, or whatever running the query throws (see ``Repository``).
        public mutating func next() async throws -> [Root]? {
            try await base.next()?.result
        }
    }
}
