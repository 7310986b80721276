extension Filter {
    /// Rows whose coordinates lie within `kilometers` of `center` (great-circle distance, see
    /// ``GeoDistance``), correct across the antimeridian and near the poles; rows with a NULL or
    /// out-of-range coordinate never match.
    ///
    /// ```swift
    /// let near = try await airports.fetch(
    ///     where: .within(kilometers: 50, of: oslo, latitude: \.latitude, longitude: \.longitude))
    /// // SQLite:     WHERE "lat" BETWEEN ? AND ? AND "lon" BETWEEN ? AND ?
    /// //             AND depot_distance(?, ?, "lat", "lon") <= ?
    /// ```
    ///
    /// The bounding box before the exact distance lets an index on the latitude column (or on
    /// both) serve the filter; without one it is a scan, with the same answer.
    public static func within<Latitude: StorableValue, Longitude: StorableValue>(
        kilometers: Double, of center: Coordinate, latitude: KeyPath<Root, Latitude>,
        longitude: KeyPath<Root, Longitude>
    ) -> Filter {
        Filter(
            .withinDistance(
                latitudeColumn: column(latitude), longitudeColumn: column(longitude), center: center.normalized,
                kilometers: kilometers))
    }
}

extension Repository {
    /// The `count` entities nearest to `point` (among those matching `predicate`), nearest first,
    /// found through growing circles (``Filter/within(kilometers:of:latitude:longitude:)``) so an
    /// index on the latitude column serves them instead of a scan of every row.
    ///
    /// ```swift
    /// let five = try await airports.nearest(5, to: oslo, latitude: \.latitude, longitude: \.longitude)
    /// ```
    ///
    /// The answer is the first `count` rows of
    /// `fetch(where: predicate, orderBy: [.nearest(to:latitude:longitude:)])` among rows with valid
    /// coordinates (a circle of `startKilometers` first, four times wider each time it holds
    /// fewer than `count`, until it covers the globe). Rows with a NULL or out-of-range
    /// coordinate are never returned.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` for a negative `count`, and the kinds
    ///   every call may throw (see ``Repository``).
    public func nearest<Latitude: StorableValue, Longitude: StorableValue>(
        _ count: Int, to point: Coordinate, latitude: KeyPath<Root, Latitude>, longitude: KeyPath<Root, Longitude>,
        where predicate: Filter<Root>? = nil, startKilometers: Double = 25
    ) async throws -> [Root] {
        let table = try checkedSchema().table
        guard count >= 0 else {
            throw DepotError(.invalidQuery, "nearest needs a count of at least 0 (got \(count))", table: table.name)
        }
        guard count > 0 else { return [] }
        let order: [Ordering<Root>] = [.nearest(to: point, latitude: latitude, longitude: longitude)]
        // Half the circumference: every point of the globe is within it.
        let globe = GeoDistance.earthRadiusKilometers * .pi
        var radius = Swift.max(startKilometers, 0.001)
        while true {
            let within: Filter<Root> = .within(
                kilometers: Swift.min(radius, globe), of: point, latitude: latitude, longitude: longitude)
            let found = try await fetch(
                where: predicate.map { $0 && within } ?? within, orderBy: order, limit: count)
            // Every row outside the circle is farther than every row inside it.
            if found.count == count || radius >= globe { return found }
            radius *= 4
        }
    }
}

extension Filter {
    /// Rows whose text holds, for each word of `query`, a word starting with it, ignoring case
    /// (and diacritics with ``TextMatching/caseAndDiacriticInsensitive``): "osl gard" finds
    /// "Oslo Airport, Gardermoen". See ``TextSearch`` for what a word is.
    ///
    /// ```swift
    /// let found = try await airports.fetch(where: .matches(\.name, "osl gard"))
    /// // SQLite: WHERE "airports".rowid IN (SELECT rowid FROM "airports#name#words"
    /// //           WHERE "airports#name#words" MATCH '"osl"* AND "gard"*')   -- FTS5, Depot's words
    /// ```
    ///
    /// SQL stores answer it from the column's search index, which a migration creates
    /// (``MigrationOperation/createSearchIndex(_:_:)``) and the database keeps up to date whoever
    /// writes the rows; without it the query fails with `.invalidQuery` saying so. The in-memory
    /// store needs none. A query without words matches every row.
    public static func matches(
        _ keyPath: KeyPath<Root, some StorableValue>, _ query: String, _ matching: TextMatching = .caseInsensitive
    ) -> Filter {
        let matching: TextMatching = matching == .caseAndDiacriticInsensitive ? matching : .caseInsensitive
        let tokens = TextSearch.tokens(of: query, matching)
        guard !tokens.isEmpty else { return .all }
        return Filter(.matches(column: column(keyPath), tokens: tokens, matching: matching))
    }
}
