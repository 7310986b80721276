extension Repository {
    /// The entities matching `predicate`, each with the related rows of `includes`.
    ///
    /// ```swift
    /// let airports = try await store.repository(Airport.self).fetch(
    ///     where: \.kind == "large_airport", including: [Airport.country])
    /// try airports[0][Airport.country]?.name  // "Norway"
    /// ```
    /// The parents are one query; each included relation one more, at every nesting level.
    /// Reading a relation that was not included (`airports[0][Airport.runways]` here) throws
    /// `DepotError` of kind `.invalidQuery`, naming it.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidSchema` when the relations of `Root` or of an
    ///   included entity are declared wrongly, `.invalidQuery` when one relation is included twice
    ///   at the same level or an include's limit is negative, and the kinds every fetch may throw
    ///   (see ``fetch(where:orderBy:limit:offset:)``).
    public func fetch(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, offset: Int? = nil, including includes: [any IncludeSpec<Root>]
    ) async throws -> [Loaded<Root>] {
        _ = try checkedRelations()
        let parents = try await fetch(where: predicate, orderBy: ordering, limit: limit, offset: offset)
        return try await Loaded.load(parents, includes, context.reader)
    }
}
