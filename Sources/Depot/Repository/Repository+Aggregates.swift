extension Repository {
    /// Computes aggregates over the entities matching `predicate`, inside the store, in one
    /// statement.
    ///
    /// ```swift
    /// let (count, highest, mean) = try await airports.aggregate(
    ///     .count, .max(\.elevation), .average(\.elevation), where: \.country == "NO")
    /// ```
    ///
    /// A table that does not exist yet holds no rows: count and sum are 0, the others `nil`.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` for an aggregate the column's type does not
    ///   allow, `.overflow` when an integer sum exceeds Int64, and the kinds every call may throw
    ///   (see ``Repository``).
    public func aggregate<each Value>(
        _ aggregates: repeat Aggregate<Root, each Value>, where predicate: Filter<Root>? = nil
    ) async throws -> (repeat each Value) {
        var terms: [AggregateTerm] = []
        repeat terms.append((each aggregates).term)
        let table = try checkedSchema().table
        let query = AggregateQuery(table: table, predicate: predicate?.node, aggregates: terms)
        guard let row = try await context.reader.aggregate(query).first else {
            throw DepotError(.invalidQuery, "the store returned no row for an ungrouped aggregate", table: table.name)
        }
        var position = 0
        return (repeat try Self.decode(each aggregates, row, &position, table))
    }

    /// The sum of a numeric column over the matching entities: exact for integers and decimals;
    /// 0 when none match.
    ///
    /// ```swift
    /// let revenue = try await orders.sum(\.total, where: \.status == "paid")  // Decimal
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.overflow` when an integer sum exceeds Int64, and the
    ///   kinds every call may throw (see ``Repository``).
    public func sum<Number: StorableValue & AdditiveArithmetic>(
        _ keyPath: KeyPath<Root, Number>, where predicate: Filter<Root>? = nil
    ) async throws -> Number {
        try await aggregate(.sum(keyPath), where: predicate)
    }

    /// The sum of an optional numeric column over the matching entities, NULLs left out.
    ///
    /// - Throws: ``DepotError`` of kind `.overflow` when an integer sum exceeds Int64, and the
    ///   kinds every call may throw (see ``Repository``).
    public func sum<Number: StorableValue & AdditiveArithmetic>(
        _ keyPath: KeyPath<Root, Number?>, where predicate: Filter<Root>? = nil
    ) async throws -> Number {
        try await aggregate(.sum(keyPath), where: predicate)
    }

    /// The mean of a numeric column over the matching entities; `nil` when none has a value.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func average<Number: StorableValue & Numeric>(
        _ keyPath: KeyPath<Root, Number>, where predicate: Filter<Root>? = nil
    ) async throws -> Double? {
        try await aggregate(.average(keyPath), where: predicate)
    }

    /// The mean of an optional numeric column over the matching entities, NULLs left out.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func average<Number: StorableValue & Numeric>(
        _ keyPath: KeyPath<Root, Number?>, where predicate: Filter<Root>? = nil
    ) async throws -> Double? {
        try await aggregate(.average(keyPath), where: predicate)
    }

    /// The smallest value of a column over the matching entities (text by UTF-8 bytes); `nil`
    /// when none has a value.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func min<Ordered: StorableValue & Comparable>(
        _ keyPath: KeyPath<Root, Ordered>, where predicate: Filter<Root>? = nil
    ) async throws -> Ordered? {
        try await aggregate(.min(keyPath), where: predicate)
    }

    /// The smallest value of an optional column over the matching entities, NULLs left out.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func min<Ordered: StorableValue & Comparable>(
        _ keyPath: KeyPath<Root, Ordered?>, where predicate: Filter<Root>? = nil
    ) async throws -> Ordered? {
        try await aggregate(.min(keyPath), where: predicate)
    }

    /// The largest value of a column over the matching entities; `nil` when none has a value.
    ///
    /// ```swift
    /// let highest = try await airports.max(\.elevation, where: \.country == "NO")
    /// ```
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func max<Ordered: StorableValue & Comparable>(
        _ keyPath: KeyPath<Root, Ordered>, where predicate: Filter<Root>? = nil
    ) async throws -> Ordered? {
        try await aggregate(.max(keyPath), where: predicate)
    }

    /// The largest value of an optional column over the matching entities, NULLs left out.
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func max<Ordered: StorableValue & Comparable>(
        _ keyPath: KeyPath<Root, Ordered?>, where predicate: Filter<Root>? = nil
    ) async throws -> Ordered? {
        try await aggregate(.max(keyPath), where: predicate)
    }

    /// The distinct values of a column among the matching entities, smallest first (`nil`, for
    /// an optional column with NULLs, first).
    ///
    /// ```swift
    /// let countries = try await airports.distinct(\.country, where: \.kind == "large_airport")
    /// // SELECT "country" FROM "airports" WHERE "kind" = ? GROUP BY "country" ORDER BY "country"
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` for a negative `limit` or `offset`, and
    ///   the kinds every call may throw (see ``Repository``).
    public func distinct<Value: StorableValue>(
        _ keyPath: KeyPath<Root, Value>, where predicate: Filter<Root>? = nil, limit: Int? = nil,
        offset: Int? = nil
    ) async throws -> [Value] {
        try await group(by: keyPath, where: predicate, limit: limit, offset: offset)
    }

    /// Whether any entity matches `predicate`; stops at the first.
    ///
    /// ```swift
    /// let any = try await airports.exists(where: \.iata == "OSL")
    /// ```
    ///
    /// - Throws: ``DepotError`` of the kinds every call may throw (see ``Repository``).
    public func exists(where predicate: Filter<Root>? = nil) async throws -> Bool {
        try await context.reader.count(query(predicate, [], limit: 1, offset: nil)) > 0
    }

    /// Groups the matching entities by a column and computes aggregates per group, inside the
    /// store: one result per distinct value (`nil` forms a group of its own), so no group is
    /// empty.
    ///
    /// ```swift
    /// let busiest = try await airports.group(
    ///     by: \.country, computing: .count, .max(\.elevation),
    ///     where: \.kind == "large_airport", having: Aggregate.count >= 10,
    ///     orderBy: [.descending(.count)], limit: 3)
    /// // [(String, Int, Int?)]: [("US", 170, 5_431), …]
    /// ```
    ///
    /// Results are ordered by `orderBy`, then by the grouping column (smallest first).
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` for an aggregate the column's type does not
    ///   allow or an ordering by a column that is not grouped, `.overflow` when an integer sum
    ///   exceeds Int64, and the kinds every call may throw (see ``Repository``).
    public func group<Key: StorableValue, each Value>(
        by key: KeyPath<Root, Key>, computing aggregates: repeat Aggregate<Root, each Value>,
        where predicate: Filter<Root>? = nil, having: AggregateFilter<Root>? = nil,
        orderBy ordering: [AggregateOrdering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [(Key, repeat each Value)] {
        var terms: [AggregateTerm] = []
        repeat terms.append((each aggregates).term)
        let (rows, table) = try await grouped(
            [key], terms, predicate, having, ordering, limit: limit, offset: offset)
        return try rows.map { row in
            var position = 1
            return (
                try Self.key(Key.self, row[0], table, key),
                repeat try Self.decode(each aggregates, row, &position, table)
            )
        }
    }

    /// Groups the matching entities by two columns and computes aggregates per group (see
    /// ``group(by:computing:where:having:orderBy:limit:offset:)``).
    ///
    /// ```swift
    /// let kinds = try await airports.group(by: \.country, \.kind, computing: .count)
    /// // [(String, String, Int)]
    /// ```
    ///
    /// - Throws: ``DepotError``, as the one-column grouping does.
    public func group<First: StorableValue, Second: StorableValue, each Value>(
        by first: KeyPath<Root, First>, _ second: KeyPath<Root, Second>,
        computing aggregates: repeat Aggregate<Root, each Value>,
        where predicate: Filter<Root>? = nil, having: AggregateFilter<Root>? = nil,
        orderBy ordering: [AggregateOrdering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [(First, Second, repeat each Value)] {
        var terms: [AggregateTerm] = []
        repeat terms.append((each aggregates).term)
        let (rows, table) = try await grouped(
            [first, second], terms, predicate, having, ordering, limit: limit, offset: offset)
        return try rows.map { row in
            var position = 2
            return (
                try Self.key(First.self, row[0], table, first), try Self.key(Second.self, row[1], table, second),
                repeat try Self.decode(each aggregates, row, &position, table)
            )
        }
    }

    /// Groups the matching entities by three columns and computes aggregates per group (see
    /// ``group(by:computing:where:having:orderBy:limit:offset:)``).
    ///
    /// - Throws: ``DepotError``, as the one-column grouping does.
    public func group<First: StorableValue, Second: StorableValue, Third: StorableValue, each Value>(
        by first: KeyPath<Root, First>, _ second: KeyPath<Root, Second>, _ third: KeyPath<Root, Third>,
        computing aggregates: repeat Aggregate<Root, each Value>,
        where predicate: Filter<Root>? = nil, having: AggregateFilter<Root>? = nil,
        orderBy ordering: [AggregateOrdering<Root>] = [], limit: Int? = nil, offset: Int? = nil
    ) async throws -> [(First, Second, Third, repeat each Value)] {
        var terms: [AggregateTerm] = []
        repeat terms.append((each aggregates).term)
        let (rows, table) = try await grouped(
            [first, second, third], terms, predicate, having, ordering, limit: limit, offset: offset)
        return try rows.map { row in
            var position = 3
            return (
                try Self.key(First.self, row[0], table, first), try Self.key(Second.self, row[1], table, second),
                try Self.key(Third.self, row[2], table, third),
                repeat try Self.decode(each aggregates, row, &position, table)
            )
        }
    }

    private func grouped(
        _ keys: [AnyKeyPath], _ terms: [AggregateTerm], _ predicate: Filter<Root>?, _ having: AggregateFilter<Root>?,
        _ ordering: [AggregateOrdering<Root>], limit: Int?, offset: Int?
    ) async throws -> (rows: [[StoredValue]], table: TableDescription) {
        let table = try checkedSchema().table
        let query = AggregateQuery(
            table: table, predicate: predicate?.node, groupBy: keys.map { schema.referenceName($0) },
            aggregates: terms, having: having?.node, ordering: ordering.map(\.term), limit: limit, offset: offset)
        return (try await context.reader.aggregate(query), table)
    }

    private static func decode<Value>(
        _ aggregate: Aggregate<Root, Value>, _ row: [StoredValue], _ position: inout Int, _ table: TableDescription
    ) throws -> Value {
        defer { position += 1 }
        return try aggregate.value(row[position], table: table)
    }

    private static func key<Key: StorableValue>(
        _ type: Key.Type, _ stored: StoredValue, _ table: TableDescription, _ keyPath: AnyKeyPath
    ) throws -> Key {
        do {
            return try Key(storedValue: stored)
        } catch {
            let column = Root.schema.referenceName(keyPath)
            throw DepotError(
                .decodingFailed, "grouping column \(column) of \(Root.self) (table '\(table.name)') \(error)",
                table: table.name, column: column)
        }
    }
}
