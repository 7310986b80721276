/// One term of a result order, typed by entity.
///
/// ```swift
/// let list = try await airports.fetch(orderBy: [.descending(\.elevation), .ascending(\.name)])
/// // SQLite:     ORDER BY "elevation" DESC, "name", "icao"
/// // PostgreSQL: ORDER BY "elevation" DESC NULLS LAST, "name" COLLATE "C" ASC NULLS FIRST,
/// //             "icao" COLLATE "C" ASC NULLS FIRST
/// let nearest = try await airports.fetch(
///     orderBy: [.nearest(to: Coordinate(latitude: 60.19, longitude: 11.10),
///                        latitude: \.latitude, longitude: \.longitude)],
///     limit: 5)
/// // SQLite:     ORDER BY depot_distance(?, ?, "lat", "lon") NULLS LAST, "icao" LIMIT ?
/// // PostgreSQL: ORDER BY depot_distance($1, $2, "lat", "lon") NULLS LAST,
/// //             "icao" COLLATE "C" ASC NULLS FIRST LIMIT $3
/// ```
///
/// NULL sorts before every value (first when ascending, last when descending), on every store.
/// Results always end with the primary key as a tie-breaker, so every order is total and the
/// same on every store (with `limit` and `offset` too).
public struct Ordering<Root: Entity>: Sendable {
    /// The untyped term stores evaluate.
    public let term: OrderTerm

    /// Wraps an untyped term; prefer the static builders.
    public init(_ term: OrderTerm) { self.term = term }

    /// Smallest first; NULL first.
    public static func ascending(_ keyPath: KeyPath<Root, some StorableValue>) -> Ordering {
        Ordering(.column(Root.schema.referenceName(keyPath), descending: false))
    }

    /// Largest first; NULL last.
    public static func descending(_ keyPath: KeyPath<Root, some StorableValue>) -> Ordering {
        Ordering(.column(Root.schema.referenceName(keyPath), descending: true))
    }

    /// Unavailable: JSON values have no order every store shares (PostgreSQL orders `jsonb` by
    /// its own rules, SQLite by text); order by a member stored in a column of its own.
    @available(
        *, unavailable, message: "JSON values have no order every store shares; order by a member of its own column"
    )
    public static func ascending<Value: StorableAsJSON>(_ keyPath: KeyPath<Root, Value>) -> Ordering {
        Ordering(.column(Root.schema.referenceName(keyPath), descending: false))
    }

    /// Unavailable: JSON values have no order every store shares.
    @available(
        *, unavailable, message: "JSON values have no order every store shares; order by a member of its own column"
    )
    public static func descending<Value: StorableAsJSON>(_ keyPath: KeyPath<Root, Value>) -> Ordering {
        Ordering(.column(Root.schema.referenceName(keyPath), descending: true))
    }

    /// Unavailable: JSON values have no order every store shares.
    @available(
        *, unavailable, message: "JSON values have no order every store shares; order by a member of its own column"
    )
    public static func ascending<Value: StorableAsJSON>(_ keyPath: KeyPath<Root, Value?>) -> Ordering {
        Ordering(.column(Root.schema.referenceName(keyPath), descending: false))
    }

    /// Unavailable: JSON values have no order every store shares.
    @available(
        *, unavailable, message: "JSON values have no order every store shares; order by a member of its own column"
    )
    public static func descending<Value: StorableAsJSON>(_ keyPath: KeyPath<Root, Value?>) -> Ordering {
        Ordering(.column(Root.schema.referenceName(keyPath), descending: true))
    }

    /// Text smallest first as `matching` compares it: `.caseInsensitive` orders by the folded
    /// text ("apple" < "Banana" < "cherry"), `.caseAndDiacriticInsensitive` also ignores
    /// diacritics ("Århus" next to "Arhus"); byte order of the folded text, the same on every
    /// store. NULL first.
    ///
    /// ```swift
    /// let list = try await airports.fetch(orderBy: [.ascending(\.name, .caseInsensitive)])
    /// // SQLite:     ORDER BY depot_fold("name"), "icao"
    /// // PostgreSQL: ORDER BY depot_fold("name") COLLATE "C" ASC NULLS FIRST, "icao" COLLATE "C" ASC NULLS FIRST
    /// ```
    public static func ascending(_ keyPath: KeyPath<Root, String>, _ matching: TextMatching) -> Ordering {
        Ordering(text(keyPath, descending: false, matching))
    }

    /// Optional text smallest first as `matching` compares it; NULL first.
    public static func ascending(_ keyPath: KeyPath<Root, String?>, _ matching: TextMatching) -> Ordering {
        Ordering(text(keyPath, descending: false, matching))
    }

    /// Text largest first as `matching` compares it; NULL last.
    public static func descending(_ keyPath: KeyPath<Root, String>, _ matching: TextMatching) -> Ordering {
        Ordering(text(keyPath, descending: true, matching))
    }

    /// Optional text largest first as `matching` compares it; NULL last.
    public static func descending(_ keyPath: KeyPath<Root, String?>, _ matching: TextMatching) -> Ordering {
        Ordering(text(keyPath, descending: true, matching))
    }

    private static func text(_ keyPath: AnyKeyPath, descending: Bool, _ matching: TextMatching) -> OrderTerm {
        let name = Root.schema.referenceName(keyPath)
        return matching == .caseSensitive
            ? .column(name, descending: descending) : .text(name, descending: descending, matching: matching)
    }

    /// Most relevant to a search first: rows where more of `query`'s words are whole words of
    /// the text, then shorter texts (see ``TextSearch``), then the primary key.
    ///
    /// ```swift
    /// let found = try await airports.fetch(
    ///     where: .matches(\.name, "oslo"), orderBy: [.relevance(\.name, to: "oslo")], limit: 10)
    /// // "Oslo" (a whole word, short) before "Oslo Airport, Gardermoen", before "Oslofjord Field"
    /// ```
    public static func relevance(
        _ keyPath: KeyPath<Root, some StorableValue>, to query: String, _ matching: TextMatching = .caseInsensitive
    ) -> Ordering {
        Ordering(
            .relevance(
                Root.schema.referenceName(keyPath), tokens: TextSearch.tokens(of: query, matching),
                matching: matching == .caseAndDiacriticInsensitive ? matching : .caseInsensitive))
    }

    /// Nearest to `point` first, by great-circle (haversine) distance over two columns holding
    /// degrees; rows without coordinates come last. See ``GeoDistance``.
    public static func nearest<Latitude: StorableValue, Longitude: StorableValue>(
        to point: Coordinate, latitude: KeyPath<Root, Latitude>, longitude: KeyPath<Root, Longitude>
    ) -> Ordering {
        Ordering(
            .distance(
                latitudeColumn: Root.schema.referenceName(latitude),
                longitudeColumn: Root.schema.referenceName(longitude), from: point.normalized))
    }
}

/// An order term as stores see it.
public enum OrderTerm: Sendable, Hashable {
    /// By a column's value; NULL is smallest.
    case column(String, descending: Bool)
    /// By haversine distance from a point, nearest first; NULL coordinates last.
    case distance(latitudeColumn: String, longitudeColumn: String, from: Coordinate)
    /// By a text column as `matching` folds it (byte order of the folded text); NULL smallest.
    case text(String, descending: Bool, matching: TextMatching)
    /// By search relevance to `tokens` (``TextSearch/exactWords(_:tokens:_:)``, most first), then
    /// by the text's length in scalars (shortest first, NULL first).
    case relevance(String, tokens: [String], matching: TextMatching)

    /// The column names this term reads.
    public var columns: [String] {
        switch self {
        case .column(let name, _), .text(let name, _, _), .relevance(let name, _, _): [name]
        case .distance(let latitude, let longitude, _): [latitude, longitude]
        }
    }
}
