extension Repository {
    /// The results of a query now, then again after every committed transaction that changed them.
    ///
    /// ```swift
    /// for try await list in airports.observe(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
    ///     show(list)
    /// }
    /// ```
    /// Only commits that touch the entity's table re-run the query; identical consecutive results
    /// are not emitted; a rolled-back transaction emits nothing. The query runs when the consumer
    /// asks for the next element, so a slow consumer gets the latest result, never a backlog.
    /// Leaving the loop or cancelling the task ends the observation and releases what it held.
    ///
    /// Observers of the same query on one store share each re-query. `timing` spaces them out:
    /// ``ObservationTiming/debounce(_:)`` waits for commits to stop, ``ObservationTiming/throttle(_:)``
    /// emits at most once per interval.
    ///
    /// Errors surface from the loop: a ``DepotError`` of kind `.invalidQuery` when this repository
    /// belongs to a ``Transaction`` (observe the store's), or what
    /// ``fetch(where:orderBy:limit:offset:)`` throws.
    public func observe(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        timing: ObservationTiming = .immediate
    ) -> QueryObservation<Root> {
        QueryObservation(changes: changes(where: predicate, orderBy: ordering, limit: limit, timing: timing))
    }

    /// Like ``observe(where:orderBy:limit:timing:)``, with each new result's diff against the
    /// previous element (see ``ResultChange``). The first element holds the whole result, inserted.
    ///
    /// Rows are matched by primary key and compared by their stored values; only new and changed
    /// rows are decoded again. Errors surface from the loop, as for ``observe(where:orderBy:limit:timing:)``.
    public func changes(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        timing: ObservationTiming = .immediate
    ) -> QueryChanges<Root> {
        do {
            guard case .store(let store) = context else {
                throw DepotError(.invalidQuery, "observe the store's repository, not a transaction's")
            }
            return QueryChanges(
                source: .success((store, try query(predicate, ordering, limit: limit, offset: nil))), timing: timing)
        } catch {
            return QueryChanges(source: .failure(error), timing: timing)
        }
    }
}

extension MappedRepository {
    /// The live results of a query as domain models: ``Repository/observe(where:orderBy:limit:timing:)``
    /// on the stored entities, each element mapped through the mapper.
    ///
    /// ```swift
    /// let people = store.repository(PersonRow.self).mapped(by: PersonMapper())
    /// for try await list in people.observe(where: \.city == "Oslo") { show(list) }  // [Person]
    /// ```
    public func observe(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> some AsyncSequence<[Mapper.Model], any Error> & Sendable {
        let mapper = mapper
        return base.observe(where: predicate, orderBy: ordering, limit: limit, timing: timing).map { @Sendable in
            try $0.map(mapper.model)
        }
    }

    /// Like ``observe(where:orderBy:limit:timing:)``, with each result's diff against the previous
    /// element (see ``ResultChange``), computed on the stored entities' keys and values.
    public func changes(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> some AsyncSequence<ResultChange<Mapper.Model>, any Error> & Sendable {
        let mapper = mapper
        return base.changes(where: predicate, orderBy: ordering, limit: limit, timing: timing).map { @Sendable in
            try $0.map(mapper.model)
        }
    }
}

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
