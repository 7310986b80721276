extension Repository {
    /// The entities matching `predicate`, in `orderBy` order (then by primary key).
    ///
    /// ```swift
    /// let list = try await airports.fetch(where: \.country == "IS", orderBy: [.ascending(\.name)],
    ///                                     limit: 10, offset: 20)
    /// // SQLite:     SELECT "icao", … FROM "airports" WHERE "country" = ? ORDER BY "name", "icao"
    /// //             LIMIT ? OFFSET ?  -- 10 and 20, bound like every value
    /// // PostgreSQL: SELECT "icao", … FROM "airports" WHERE "country" COLLATE "C" = $1
    /// //             ORDER BY "name" COLLATE "C" ASC NULLS FIRST, "icao" COLLATE "C" ASC NULLS FIRST
    /// //             LIMIT $2 OFFSET $3
    /// ```
    ///
    /// A table that does not exist yet reads as empty.
    ///
    /// - Parameters:
    ///   - predicate: The rows to return; every row when `nil`.
    ///   - ordering: The order, before the primary key that ends every order.
    ///   - limit: The most rows returned; no limit when `nil`.
    ///   - offset: How many rows of that order to skip first.
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative,
    ///   and the kinds every call may throw (see ``Repository``).
    public func fetch(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, offset: Int? = nil
    ) async throws -> [Root] {
        let query = try query(predicate, ordering, limit: limit, offset: offset)
        let schema = schema
        return try await context.reader.scan(query) { cursor in try schema.decodeAll(&cursor) }
    }

    /// Every stored entity, in primary-key order.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func fetchAll() async throws -> [Root] {
        try await fetch()
    }

    /// The first entity matching `predicate` in `orderBy` order, if any (a fetch with limit 1).
    ///
    /// ```swift
    /// let highest = try await airports.first(where: \.country == "NO", orderBy: [.descending(\.elevation)])
    /// ```
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func first(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = []
    ) async throws -> Root? {
        try await fetch(where: predicate, orderBy: ordering, limit: 1).first
    }

    /// How many entities match `predicate` (all of them when `nil`).
    ///
    /// ```swift
    /// let withCode = try await airports.count(where: \.iata != nil)
    /// // SQL: SELECT COUNT(*) FROM "airports" WHERE "iata" IS NOT NULL
    /// ```
    ///
    /// A table that does not exist yet counts 0.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func count(where predicate: Filter<Root>? = nil) async throws -> Int {
        try await context.reader.count(query(predicate, [], limit: nil, offset: nil))
    }

    /// The entity with primary key `key`, if stored.
    ///
    /// ```swift
    /// let oslo = try await airports.find("ENGM")
    /// // SQLite:     SELECT "icao", … FROM "airports" WHERE "icao" = ? ORDER BY "icao" LIMIT ?
    /// // PostgreSQL: SELECT "icao", … FROM "airports" WHERE "icao" COLLATE "C" = $1
    /// //             ORDER BY "icao" COLLATE "C" ASC NULLS FIRST LIMIT $2
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when the primary key has more than one
    ///   column (use ``find(_:_:)``), and the kinds every call may throw (see ``Repository``).
    public func find<Key: StorableValue>(_ key: Key) async throws -> Root? {
        try await find(keyValues: [key.storedValue])
    }

    /// The entity with the two-column primary key (`first`, `second`), if stored.
    ///
    /// ```swift
    /// let runway = try await runways.find("ENGM", "01L")  // primaryKey: \.airport, \.designator
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when the primary key does not have exactly
    ///   two columns, and the kinds every call may throw (see ``Repository``).
    public func find<First: StorableValue, Second: StorableValue>(
        _ first: First, _ second: Second
    ) async throws -> Root? {
        try await find(keyValues: [first.storedValue, second.storedValue])
    }

    func find(keyValues: [StoredValue]) async throws -> Root? {
        let query = SelectQuery(table: try checkedSchema().table, predicate: try keyPredicate(keyValues), limit: 1)
        let schema = schema
        return try await context.reader.scan(query) { cursor in try schema.decodeAll(&cursor) }.first
    }
}
