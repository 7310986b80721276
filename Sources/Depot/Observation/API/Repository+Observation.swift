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
    /// ``ObservationTiming/debounce(_:maxWait:)`` waits for commits to stop, ``ObservationTiming/throttle(_:)``
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
        changes(predicate, ordering, limit: limit, offset: nil, timing: timing)
    }

    func changes(
        _ predicate: Filter<Root>?, _ ordering: [Ordering<Root>], limit: Int?, offset: Int?, timing: ObservationTiming
    ) -> QueryChanges<Root> {
        do {
            guard case .store(let store) = context else {
                throw DepotError(.invalidQuery, "observe the store's repository, not a transaction's")
            }
            return QueryChanges(
                source: .success((store, try query(predicate, ordering, limit: limit, offset: offset))), timing: timing)
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
    ///
    /// With the mapper's ``DomainMapper/includes``, a commit to an included table gives a new
    /// element too (see ``Repository/observe(where:orderBy:limit:including:)``).
    public func observe(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> ModelObservation<Mapper.Model> {
        observe(Query(where: predicate, orderBy: ordering, limit: limit), timing: timing)
    }

    /// The live results of `query` as domain models (see ``observe(where:orderBy:limit:timing:)``).
    public func observe(_ query: Query<Mapper.Stored>, timing: ObservationTiming = .immediate)
        -> ModelObservation<Mapper.Model>
    {
        if mapper.includes.isEmpty {
            return ModelObservation(
                MappedObservation(mapper: mapper, source: .rows(base.observe(query, timing: timing))))
        }
        return ModelObservation(
            MappedObservation(
                mapper: mapper,
                source: .loaded(
                    base.observe(
                        query.filter, query.ordering, limit: query.limit, offset: query.offset,
                        including: mapper.includes))
            ))
    }

    /// Like ``observe(where:orderBy:limit:timing:)``, with each result's diff against the previous
    /// element (see ``ResultChange``), computed on the stored entities' keys and values.
    ///
    /// With the mapper's ``DomainMapper/includes``, related rows are read again for every element,
    /// but only commits to the entity's own table give one; use ``observe(_:timing:)`` to follow
    /// the included tables too.
    public func changes(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) -> some AsyncSequence<ResultChange<Mapper.Model>, any Error> & Sendable {
        changes(Query(where: predicate, orderBy: ordering, limit: limit), timing: timing)
    }

    /// The live results of `query` as models with their diffs (see
    /// ``changes(where:orderBy:limit:timing:)``).
    public func changes(_ query: Query<Mapper.Stored>, timing: ObservationTiming = .immediate)
        -> some AsyncSequence<ResultChange<Mapper.Model>, any Error> & Sendable
    {
        let mapper = mapper
        let reader = base.context.reader
        return base.changes(query, timing: timing).map { @Sendable change in
            ResultChange(
                result: try await FreshReads.run { try await mapper.models(of: change.result, from: reader) },
                inserted: change.inserted,
                removed: change.removed, updated: change.updated, moved: change.moved)
        }
    }
}

/// The live results of a query as domain models (see ``MappedRepository/observe(_:timing:)``).
struct MappedObservation<Mapper: DomainMapper>: AsyncSequence, Sendable {
    /// One complete result, as models.
    public typealias Element = [Mapper.Model]
    enum Source: Sendable {
        case rows(QueryObservation<Mapper.Stored>)
        case loaded(IncludeObservation<Mapper.Stored>)
    }
    let mapper: Mapper
    let source: Source

    /// A new observation (see ``QueryObservation``).
    public func makeAsyncIterator() -> Iterator {
        switch source {
        case .rows(let rows): Iterator(mapper: mapper, rows: rows.makeAsyncIterator(), loaded: nil)
        case .loaded(let loaded): Iterator(mapper: mapper, rows: nil, loaded: loaded.makeAsyncIterator())
        }
    }

    /// One observation.
    public struct Iterator: AsyncIteratorProtocol {
        let mapper: Mapper
        var rows: QueryObservation<Mapper.Stored>.Iterator?
        var loaded: IncludeObservation<Mapper.Stored>.Iterator?

        /// The current models first, then again after each commit that changed them; `nil` when
        /// the task is cancelled or the store's commit stream ends.
        ///
        /// - Throws: What the observation of the entities throws, or the mapper's error.
        public mutating func next() async throws -> [Mapper.Model]? {
            if var rows {
                defer { self.rows = rows }
                guard let entities = try await rows.next() else { return nil }
                return try Mapper.mapping(entities.map { Loaded(entity: $0, related: [:]) }, mapper.model(from:))
            }
            guard var loaded else { return nil }
            defer { self.loaded = loaded }
            guard let entities = try await loaded.next() else { return nil }
            return try Mapper.mapping(entities, mapper.model(from:))
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
