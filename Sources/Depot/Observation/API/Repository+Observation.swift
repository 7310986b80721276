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
