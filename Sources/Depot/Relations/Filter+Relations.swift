extension ToOne {
    /// Rows whose related `Target` row matches `filter` (a subquery on the target's table).
    ///
    /// ```swift
    /// try await airports.fetch(where: Airport.country.matches(\.continent == "EU"))
    /// // SQLite:     WHERE "country" IN (SELECT "code" FROM "countries"
    /// //             WHERE "code" IS NOT NULL AND ("continent" = ?))
    /// // PostgreSQL: WHERE "country" COLLATE "C" IN (SELECT "code" FROM "countries"
    /// //             WHERE "code" IS NOT NULL AND ("continent" COLLATE "C" = $1))
    /// ```
    ///
    /// Rows whose key is NULL never match.
    public func matches(_ filter: Filter<Target>) -> Filter<Source> {
        let key = descriptor.foreignKey
        return Filter(
            .isInSubquery(
                column: key.column, Subquery(table: key.parentTable, column: key.parentColumn, predicate: filter.node)))
    }
}

extension ToMany {
    /// Rows with at least one related row matching `filter` (any related row when omitted).
    ///
    /// ```swift
    /// try await countries.fetch(where: Country.airports.any(\.kind == "large_airport"))
    /// // SQLite:     WHERE "code" IN (SELECT "country" FROM "airports"
    /// //             WHERE "country" IS NOT NULL AND ("kind" = ?))
    /// // PostgreSQL: WHERE "code" COLLATE "C" IN (SELECT "country" FROM "airports"
    /// //             WHERE "country" IS NOT NULL AND ("kind" COLLATE "C" = $1))
    /// ```
    public func any(_ filter: Filter<Target> = .all) -> Filter<Source> {
        let key = descriptor.foreignKey
        return Filter(
            .isInSubquery(
                column: key.parentColumn, Subquery(table: key.childTable, column: key.column, predicate: filter.node)))
    }

    /// Rows with no related row matching `filter` (no related row at all when omitted).
    ///
    /// ```swift
    /// let withoutAirports = try await countries.fetch(where: Country.airports.none())
    /// // SQLite:     WHERE NOT ("code" IN (SELECT "country" FROM "airports"
    /// //             WHERE "country" IS NOT NULL AND (1 = 1)))
    /// // PostgreSQL: WHERE NOT ("code" COLLATE "C" IN (SELECT "country" FROM "airports"
    /// //             WHERE "country" IS NOT NULL AND (1 = 1)))
    /// ```
    public func none(_ filter: Filter<Target> = .all) -> Filter<Source> { !any(filter) }
}

extension ManyToMany {
    /// Rows related to at least one `Target` row matching `filter`, through the join entity's rows
    /// (two nested subqueries).
    ///
    /// ```swift
    /// try await airports.fetch(where: Airport.alliances.any(\.name == "Star Alliance"))
    /// // SQLite: WHERE "icao" IN (SELECT "airport" FROM "memberships" WHERE "airport" IS NOT NULL
    /// //         AND ("alliance" IN (SELECT "code" FROM "alliances" WHERE "code" IS NOT NULL
    /// //         AND ("name" = ?))))
    /// // PostgreSQL: the same, with `$1` and each text operand compared `COLLATE "C"`.
    /// ```
    public func any(_ filter: Filter<Target> = .all) -> Filter<Source> {
        let from = descriptor.foreignKey
        guard let to = descriptor.targetKey else { return .nothing }
        let targets = PredicateNode.isInSubquery(
            column: to.column, Subquery(table: to.parentTable, column: to.parentColumn, predicate: filter.node))
        return Filter(
            .isInSubquery(
                column: from.parentColumn, Subquery(table: from.childTable, column: from.column, predicate: targets)))
    }

    /// Rows related to no `Target` row matching `filter`.
    public func none(_ filter: Filter<Target> = .all) -> Filter<Source> { !any(filter) }
}
