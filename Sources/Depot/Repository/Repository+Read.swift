extension Repository {
    /// The entities matching `predicate`, in `orderBy` order (then by primary key).
    ///
    /// ```swift
    /// let list = try await airports.fetch(where: \.country == "IS", orderBy: [.ascending(\.name)],
    ///                                     limit: 10, offset: 20)
    /// // SQLite: SELECT "icao", … FROM "airports" WHERE "country" = ? ORDER BY "name", "icao"
    /// //         LIMIT 10 OFFSET 20
    /// ```
    public func fetch(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, offset: Int? = nil
    ) async throws -> [Root] {
        let query = try query(predicate, ordering, limit: limit, offset: offset)
        let schema = schema
        return try await context.reader.scan(query) { cursor in try schema.decodeAll(&cursor) }
    }

    /// Every stored entity, in primary-key order.
    public func fetchAll() async throws -> [Root] {
        try await fetch()
    }

    /// The first entity matching `predicate` in `orderBy` order, if any.
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
    public func count(where predicate: Filter<Root>? = nil) async throws -> Int {
        try await context.reader.count(query(predicate, [], limit: nil, offset: nil))
    }

    /// The entity with primary key `key`, if stored.
    ///
    /// ```swift
    /// let oslo = try await airports.find("ENGM")
    /// ```
    public func find<Key: StorableValue>(_ key: Key) async throws -> Root? {
        try await find(keyValues: [key.storedValue])
    }

    /// The entity with the two-column primary key (`first`, `second`), if stored.
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
