/// A reusable query over one entity: a filter, an order, a page. Pass it to `fetch`, `first`,
/// `count`, `exists`, `remove`, `observe`, `changes` and `sections` of a ``Repository`` or a
/// ``MappedRepository``.
///
/// ```swift
/// let onlineBots = Query<UserEntity>(where: \.kind == "bot" && \.isOnline == true)
///     .sorted(by: .ascending(\.name)).limit(20)
/// let page = try await users.fetch(onlineBots)
/// let total = try await users.count(onlineBots)        // at most 20: what fetch returns
/// for try await list in users.observe(onlineBots) { print(list.count) }
/// let loaded = try await users.fetch(onlineBots.including(UserEntity.image))  // [Loaded<UserEntity>]
/// ```
///
/// Builders return a new query: ``filter(_:)`` adds a condition (`&&`), ``sorted(by:)`` orders
/// before the existing order, ``limit(_:offset:)`` sets the page.
public struct Query<Root: Entity>: Sendable {
    /// The rows the query matches (all when `nil`).
    public var filter: Filter<Root>?
    /// Their order; the primary key breaks ties.
    public var ordering: [Ordering<Root>]
    /// At most this many rows.
    public var limit: Int?
    /// Skips this many rows first.
    public var offset: Int?

    /// A query of the rows matching `filter`, in `ordering`, paged by `limit` and `offset`.
    public init(
        where filter: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        offset: Int? = nil
    ) {
        self.filter = filter
        self.ordering = ordering
        self.limit = limit
        self.offset = offset
    }

    /// This query, matching only the rows `filter` matches too.
    public func filter(_ filter: Filter<Root>) -> Query {
        var query = self
        query.filter = self.filter.map { $0 && filter } ?? filter
        return query
    }

    /// This query ordered by `orderings` first, then by its own order.
    public func sorted(by orderings: Ordering<Root>...) -> Query {
        var query = self
        query.ordering = orderings + ordering
        return query
    }

    /// This query with a page of at most `limit` rows after `offset`.
    public func limit(_ limit: Int, offset: Int? = nil) -> Query {
        var query = self
        query.limit = limit
        query.offset = offset
        return query
    }

    /// This query, each row loaded with its related rows (see
    /// ``Repository/fetch(where:orderBy:limit:offset:including:)``).
    public func including(_ relations: any IncludeSpec<Root>...) -> LoadingQuery<Root> {
        LoadingQuery(query: self, includes: relations)
    }

    /// How many of `total` matching rows the page keeps.
    func paged(_ total: Int) -> Int {
        let after = max(0, total - max(0, offset ?? 0))
        return limit.map { min(after, max(0, $0)) } ?? after
    }
}

/// A ``Query`` whose rows come with related rows: fetched, first and observed as
/// `Loaded<Root>` values.
public struct LoadingQuery<Root: Entity>: Sendable {
    /// The rows.
    public var query: Query<Root>
    /// The relations loaded with each row.
    public var includes: [any IncludeSpec<Root>]

    /// This query, loading `relations` too.
    public func including(_ relations: any IncludeSpec<Root>...) -> LoadingQuery {
        LoadingQuery(query: query, includes: includes + relations)
    }
}

extension Repository {
    /// The rows `query` matches, in its order and page.
    ///
    /// - Throws: What ``fetch(where:orderBy:limit:offset:)`` throws.
    public func fetch(_ query: Query<Root>) async throws -> [Root] {
        try await fetch(where: query.filter, orderBy: query.ordering, limit: query.limit, offset: query.offset)
    }

    /// The rows `query` matches, each with its included rows.
    ///
    /// - Throws: What ``fetch(where:orderBy:limit:offset:including:)`` throws.
    public func fetch(_ query: LoadingQuery<Root>) async throws -> [Loaded<Root>] {
        let rows = query.query
        return try await fetch(
            where: rows.filter, orderBy: rows.ordering, limit: rows.limit, offset: rows.offset,
            including: query.includes)
    }

    /// The first row of `query`'s page.
    ///
    /// - Throws: What ``fetch(where:orderBy:limit:offset:)`` throws.
    public func first(_ query: Query<Root>) async throws -> Root? {
        guard (query.limit ?? 1) > 0 else { return nil }
        var first = query
        first.limit = 1
        return try await fetch(first).first
    }

    /// How many rows `fetch(_:)` returns for `query` (its page counts), without
    /// reading them.
    ///
    /// - Throws: What ``count(where:)`` throws.
    public func count(_ query: Query<Root>) async throws -> Int {
        query.paged(try await count(where: query.filter))
    }

    /// Whether `query` returns any row.
    ///
    /// - Throws: What ``count(where:)`` throws.
    public func exists(_ query: Query<Root>) async throws -> Bool {
        try await first(query) != nil
    }

    /// Removes the rows `query` returns (its page only, when it has one), in one transaction;
    /// returns how many. Delete rules apply as for ``remove(where:)``.
    ///
    /// - Throws: What ``remove(where:)`` throws.
    @discardableResult
    public func remove(_ query: Query<Root>) async throws -> Int {
        guard query.limit != nil || query.offset != nil else {
            guard let filter = query.filter else { return try await removeAll() }
            return try await remove(where: filter)
        }
        let schema = try checkedSchema()
        return try await context.atomically { writer in
            let inside = Repository(context: .transaction(writer))
            let keys = try await inside.fetch(query).map { schema.key(of: $0) }
            guard !keys.isEmpty else { return 0 }
            let node = PredicateNode.matching(keys: keys, primaryKey: schema.table.primaryKey)
            return try await inside.delete(where: node, writer)
        }
    }

    /// The live results of `query` (see ``observe(where:orderBy:limit:timing:)``).
    public func observe(_ query: Query<Root>, timing: ObservationTiming = .immediate) -> QueryObservation<Root> {
        QueryObservation(changes: changes(query, timing: timing))
    }

    /// The live results of `query` with their diffs (see ``changes(where:orderBy:limit:timing:)``).
    public func changes(_ query: Query<Root>, timing: ObservationTiming = .immediate) -> QueryChanges<Root> {
        changes(query.filter, query.ordering, limit: query.limit, offset: query.offset, timing: timing)
    }

    /// The live results of `query` with their included rows (see
    /// ``observe(where:orderBy:limit:including:)``).
    public func observe(_ query: LoadingQuery<Root>) -> IncludeObservation<Root> {
        let rows = query.query
        return observe(rows.filter, rows.ordering, limit: rows.limit, offset: rows.offset, including: query.includes)
    }

    /// `query`'s rows grouped by `key` (see ``sections(by:where:orderBy:limit:)``).
    ///
    /// - Throws: What ``sections(by:where:orderBy:limit:)`` throws.
    public func sections<Key: StorableValue & Hashable>(by key: KeyPath<Root, Key>, _ query: Query<Root>)
        async throws -> [Section<Key, Root>]
    {
        Self.sections(try await fetch(query.sorted(by: .ascending(key))), by: key)
    }
}
