extension Repository {
    // Projections: a few columns of the matching rows, decoded without building entities.

    /// The values of one column of the matching entities, in `orderBy` order (then by primary
    /// key), without decoding whole entities: only these columns are read from the store.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative,
    ///   and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue>(
        _ first: KeyPath<Root, A>, where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [A] {
        try await select(first, where: predicate, orderBy: ordering, limit: limit, offset: offset) { $0 }
    }

    /// The values of one column of the matching entities, each made into a `Projection` by
    /// `transform` (a lightweight type of your own), in `orderBy` order (then by primary key).
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative, what
    ///   `transform` throws, and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, Projection: Sendable>(
        _ first: KeyPath<Root, A>, where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil,
        as transform: @escaping @Sendable (A) throws -> Projection
    ) async throws -> [Projection] {
        let table = try checkedSchema().table
        var query = try query(predicate, ordering, limit: limit, offset: offset)
        let columns = [schema.referenceName(first)]
        query.columns = columns
        return try await context.reader.scan(query) { cursor in
            var results: [Projection] = []
            while try cursor.next() {
                results.append(try transform(try Self.projected(A.self, cursor, 0, columns, table)))
            }
            return results
        }
    }

    /// The values of 2 columns of the matching entities, in `orderBy` order (then by primary
    /// key), without decoding whole entities: only these columns are read from the store.
    ///
    /// ```swift
    /// let names = try await airports.select(\.icao, \.name, where: \.country == "NO", orderBy: [.ascending(\.name)])
    /// // [(String, String)]; SQL: SELECT "icao", "name" FROM "airports" WHERE "country" = ? ORDER BY "name", "icao"
    /// let labels = try await airports.select(\.icao, \.name) { icao, name in "\(icao) \(name)" }
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative,
    ///   and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, B: StorableValue>(
        _ first: KeyPath<Root, A>, _ second: KeyPath<Root, B>, where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [(A, B)] {
        try await select(first, second, where: predicate, orderBy: ordering, limit: limit, offset: offset) { ($0, $1) }
    }

    /// The values of 2 columns of the matching entities, each made into a `Projection` by
    /// `transform` (a lightweight type of your own), in `orderBy` order (then by primary key).
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative, what
    ///   `transform` throws, and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, B: StorableValue, Projection: Sendable>(
        _ first: KeyPath<Root, A>, _ second: KeyPath<Root, B>, where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil,
        as transform: @escaping @Sendable (A, B) throws -> Projection
    ) async throws -> [Projection] {
        let table = try checkedSchema().table
        var query = try query(predicate, ordering, limit: limit, offset: offset)
        let columns = [schema.referenceName(first), schema.referenceName(second)]
        query.columns = columns
        return try await context.reader.scan(query) { cursor in
            var results: [Projection] = []
            while try cursor.next() {
                results.append(
                    try transform(
                        try Self.projected(A.self, cursor, 0, columns, table),
                        try Self.projected(B.self, cursor, 1, columns, table)))
            }
            return results
        }
    }

    /// The values of 3 columns of the matching entities, in `orderBy` order (then by primary
    /// key), without decoding whole entities: only these columns are read from the store.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative,
    ///   and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, B: StorableValue, C: StorableValue>(
        _ first: KeyPath<Root, A>, _ second: KeyPath<Root, B>, _ third: KeyPath<Root, C>,
        where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [(A, B, C)] {
        try await select(first, second, third, where: predicate, orderBy: ordering, limit: limit, offset: offset) {
            ($0, $1, $2)
        }
    }

    /// The values of 3 columns of the matching entities, each made into a `Projection` by
    /// `transform` (a lightweight type of your own), in `orderBy` order (then by primary key).
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative, what
    ///   `transform` throws, and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, B: StorableValue, C: StorableValue, Projection: Sendable>(
        _ first: KeyPath<Root, A>, _ second: KeyPath<Root, B>, _ third: KeyPath<Root, C>,
        where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil,
        as transform: @escaping @Sendable (A, B, C) throws -> Projection
    ) async throws -> [Projection] {
        let table = try checkedSchema().table
        var query = try query(predicate, ordering, limit: limit, offset: offset)
        let columns = [schema.referenceName(first), schema.referenceName(second), schema.referenceName(third)]
        query.columns = columns
        return try await context.reader.scan(query) { cursor in
            var results: [Projection] = []
            while try cursor.next() {
                results.append(
                    try transform(
                        try Self.projected(A.self, cursor, 0, columns, table),
                        try Self.projected(B.self, cursor, 1, columns, table),
                        try Self.projected(C.self, cursor, 2, columns, table)))
            }
            return results
        }
    }

    /// The values of 4 columns of the matching entities, in `orderBy` order (then by primary
    /// key), without decoding whole entities: only these columns are read from the store.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative,
    ///   and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, B: StorableValue, C: StorableValue, D: StorableValue>(
        _ first: KeyPath<Root, A>, _ second: KeyPath<Root, B>, _ third: KeyPath<Root, C>, _ fourth: KeyPath<Root, D>,
        where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [(A, B, C, D)] {
        try await select(
            first, second, third, fourth, where: predicate, orderBy: ordering, limit: limit, offset: offset
        ) { ($0, $1, $2, $3) }
    }

    /// The values of 4 columns of the matching entities, each made into a `Projection` by
    /// `transform` (a lightweight type of your own), in `orderBy` order (then by primary key).
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `limit` or `offset` is negative, what
    ///   `transform` throws, and the kinds every call may throw (see ``Repository``).
    public func select<A: StorableValue, B: StorableValue, C: StorableValue, D: StorableValue, Projection: Sendable>(
        _ first: KeyPath<Root, A>, _ second: KeyPath<Root, B>, _ third: KeyPath<Root, C>, _ fourth: KeyPath<Root, D>,
        where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil, offset: Int? = nil,
        as transform: @escaping @Sendable (A, B, C, D) throws -> Projection
    ) async throws -> [Projection] {
        let table = try checkedSchema().table
        var query = try query(predicate, ordering, limit: limit, offset: offset)
        let columns = [
            schema.referenceName(first), schema.referenceName(second), schema.referenceName(third),
            schema.referenceName(fourth),
        ]
        query.columns = columns
        return try await context.reader.scan(query) { cursor in
            var results: [Projection] = []
            while try cursor.next() {
                results.append(
                    try transform(
                        try Self.projected(A.self, cursor, 0, columns, table),
                        try Self.projected(B.self, cursor, 1, columns, table),
                        try Self.projected(C.self, cursor, 2, columns, table),
                        try Self.projected(D.self, cursor, 3, columns, table)))
            }
            return results
        }
    }

    private static func projected<Value: StorableValue>(
        _ type: Value.Type, _ cursor: any StoreCursor, _ position: Int, _ columns: [String], _ table: TableDescription
    ) throws -> Value {
        let stored = cursor.value(at: position)
        do {
            return try Value(storedValue: stored)
        } catch {
            throw DepotError(
                .decodingFailed, "column \(columns[position]) of \(table.name) \(error)", table: table.name,
                column: columns[position])
        }
    }
}
