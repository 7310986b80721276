import Depot

/// What `airports query` asks for; every filter and the order run inside the store.
public struct AirportQuery: Sendable {
    /// Only airports of this ISO country code, e.g. `NO`; `nil` for every country.
    public var country: String?
    /// Words matched against the words of name or city through their search index (migration
    /// `4 search index`): each word of `search` starts a word of the name, or each starts a word
    /// of the city, in any case (`.matches`).
    public var search: String?
    /// Matched case-insensitively, as a substring, against name or city (a scan of every row; what
    /// the API's `q=` does, on stores with or without the search index).
    public var contains: String?
    /// Nearest first from this point, with each result's distance; `nil` for icao order and no distance.
    public var near: Coordinate?
    /// Only airports at or above this elevation, in feet; `nil` for no bound.
    public var minimumElevation: Double?
    /// Only airports whose icao sorts after this one (keyset paging in icao order).
    public var after: String?
    /// The most results to return.
    public var limit: Int

    /// A query; every filter defaults to none and `limit` to 20 (`after` is set separately).
    public init(
        country: String? = nil, search: String? = nil, contains: String? = nil, near: Coordinate? = nil,
        minimumElevation: Double? = nil, limit: Int = 20
    ) {
        self.country = country
        self.search = search
        self.contains = contains
        self.near = near
        self.minimumElevation = minimumElevation
        self.limit = limit
    }

    /// The filter this query runs in the store.
    public var filter: Filter<Airport> {
        var parts: [Filter<Airport>] = []
        if let country { parts.append(\.country == country) }
        if let search { parts.append(.matches(\.name, search) || .matches(\.city, search)) }
        if let contains {
            parts.append(.contains(\.name, contains, .caseInsensitive) || .contains(\.city, contains, .caseInsensitive))
        }
        if let minimumElevation { parts.append(\.elevation >= minimumElevation) }
        if let after { parts.append(\.icao > after) }
        return parts.reduce(Filter.all) { $0 && $1 }
    }

    /// The order: nearest first (ties by icao) with `near`, else by icao.
    public var ordering: [Ordering<Airport>] {
        guard let near else { return [] }
        return [.nearest(to: near, latitude: \.latitude, longitude: \.longitude)]
    }

    /// Runs the query on `airports`: with `near`, through `nearest` (growing circles an index on
    /// the coordinates serves), else one fetch in icao order.
    public func run(on airports: Repository<Airport>) async throws -> [AirportResult] {
        do {
            return try await results(on: airports)
        } catch let error as DepotError where error.kind == .invalidQuery && error.message.contains("search index") {
            throw DepotError(
                .invalidQuery, "searching needs the search index: run `airports migrate` on this store first",
                table: error.table, column: error.column, underlying: error)
        }
    }

    private func results(on airports: Repository<Airport>) async throws -> [AirportResult] {
        let found =
            if let near {
                try await airports.nearest(
                    limit, to: near, latitude: \.latitude, longitude: \.longitude, where: filter)
            } else {
                try await airports.fetch(where: filter, orderBy: ordering, limit: limit)
            }
        return found.map { airport in
            AirportResult(
                airport: airport,
                distanceKilometers: near.map { GeoDistance.haversineKilometers($0, airport.coordinate) })
        }
    }
}

/// One result row, as printed and as JSON.
public struct AirportResult: Encodable, Sendable, Equatable {
    /// The airport found.
    public var airport: Airport
    /// Great-circle distance from the query's `near` point, in kilometres; `nil` without `near`.
    public var distanceKilometers: Double?

    enum CodingKeys: String, CodingKey {
        case icao, iata, name, city, country, elevation, lat, lon
        case distanceKilometers = "distance_km"
    }

    /// A flat JSON object: `icao`, `iata`, `name`, `city`, `country`, `elevation`, `lat`, `lon`, and
    /// `distance_km` when known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(airport.icao, forKey: .icao)
        try container.encode(airport.iata, forKey: .iata)
        try container.encode(airport.name, forKey: .name)
        try container.encode(airport.city, forKey: .city)
        try container.encode(airport.country, forKey: .country)
        try container.encode(airport.elevation, forKey: .elevation)
        try container.encode(airport.latitude, forKey: .lat)
        try container.encode(airport.longitude, forKey: .lon)
        try container.encodeIfPresent(distanceKilometers, forKey: .distanceKilometers)
    }
}
