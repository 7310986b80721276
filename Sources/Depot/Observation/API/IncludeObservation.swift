extension Repository {
    /// The entities matching `predicate` with the related rows of `includes`, now and again after
    /// every commit to any table the query or its includes read.
    ///
    /// ```swift
    /// for try await countries in countries.observe(where: \.continent == "EU", including: [Country.airports]) {
    ///     show(countries)  // re-emitted when an airport of any country changes, too
    /// }
    /// ```
    /// Each element is a fresh fetch (no diff); commits made while the consumer is busy coalesce
    /// into the next one (the store's observers share one commit subscription). A result
    /// identical to the last one delivered — the same stored values of every entity and every
    /// included row, in the same order — is not delivered again. Leaving the loop or cancelling
    /// the task ends the observation.
    ///
    /// Errors surface from the loop: a ``DepotError`` of kind `.invalidQuery` when this repository
    /// belongs to a ``Transaction``, or what ``fetch(where:orderBy:limit:offset:including:)``
    /// throws. An iterator called again after an error reads again at once (and delivers the
    /// result unless it is the one delivered before the error).
    public func observe(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        including includes: [any IncludeSpec<Root>]
    ) -> IncludeObservation<Root> {
        observe(predicate, ordering, limit: limit, offset: nil, including: includes)
    }

    func observe(
        _ predicate: Filter<Root>?, _ ordering: [Ordering<Root>], limit: Int?, offset: Int?,
        including includes: [any IncludeSpec<Root>]
    ) -> IncludeObservation<Root> {
        // A query that cannot be built (a key path that is not a column) fails the first element,
        // naming what is wrong, rather than observing no table.
        let tables: [TableDescription]
        let failure: (any Error)?
        do {
            tables = try query(predicate, ordering, limit: limit, offset: offset).tables + includes.flatMap(\.tables)
            failure = nil
        } catch {
            tables = []
            failure = error
        }
        return IncludeObservation(
            repository: self, tables: Set(tables.map(\.name)),
            fetch: { repository in
                if let failure { throw failure }
                return try await repository.fetch(
                    where: predicate, orderBy: ordering, limit: limit, offset: offset, including: includes)
            })
    }
}

/// The live results of a query with included relations (see
/// ``Repository/observe(where:orderBy:limit:including:)``).
public struct IncludeObservation<Root: Entity>: AsyncSequence, Sendable {
    /// One complete result, each entity with its included rows.
    public typealias Element = [Loaded<Root>]
    let repository: Repository<Root>
    let tables: Set<String>
    let fetch: @Sendable (Repository<Root>) async throws -> [Loaded<Root>]

    /// A new observation; it registers with the store's commits on its first ``Iterator/next()``.
    public func makeAsyncIterator() -> Iterator { Iterator(observation: self) }

    /// One observation of the query and its includes; it ends when it is released.
    public struct Iterator: AsyncIteratorProtocol {
        let observation: IncludeObservation
        var observer: IncludeObserver?
        /// The stored values of the last result delivered (`nil`: none, or not comparable).
        var delivered: [StoredValue]?
        /// A read failed (its error thrown): the next call reads at once.
        var readAgain = false

        /// The current result first, then a fresh fetch after each commit to a table the query or
        /// its includes read, when it differs from the last result delivered; `nil` when the task
        /// is cancelled or the store's commit stream ends.
        ///
        /// - Throws: ``DepotError`` of kind `.invalidQuery` when the repository belongs to a
        ///   ``Transaction``, or what the fetch throws.
        public mutating func next() async throws -> [Loaded<Root>]? {
            let observer: IncludeObserver
            if let registered = self.observer {
                observer = registered
            } else {
                guard case .store(let store) = observation.repository.context else {
                    throw DepotError(.invalidQuery, "observe the store's repository, not a transaction's")
                }
                // Registered before the first fetch, so no commit falls between the two.
                observer = IncludeObserver(store: store, tables: observation.tables)
                self.observer = observer
                readAgain = true
            }
            while true {
                if readAgain {
                    readAgain = false
                } else {
                    guard await observer.signal.wait() else { return nil }
                }
                observer.signal.consume()  // commits so far are all covered by the fetch below
                let result: [Loaded<Root>]
                do {
                    result = try await FreshReads.run { try await observation.fetch(observation.repository) }
                } catch {
                    readAgain = true
                    throw error
                }
                let fingerprint = Loaded.fingerprint(of: result)
                if let fingerprint, fingerprint == delivered { continue }
                delivered = fingerprint
                return result
            }
        }
    }
}

/// An include observation's place in its store's hub; released with the iterator. Observations
/// other modules add (DepotSQL's hand-written statements) register the same way.
package final class IncludeObserver: Sendable {
    let hub: ObservationHub
    package let signal = CommitSignal()

    package init(store: any Store, tables: Set<String>) {
        hub = ObservationHub.hub(for: store)
        hub.register(signal, tables: tables)
    }

    deinit { hub.unregister(signal) }
}
