import Depot
import DepotHTTP
import DepotSync

extension Resource where Request == AirportsAPI.Get, Mapper == AirportRecordMapper {
    /// One airport as a screen asks for it: stored, or fetched from `GET /airports/{icao}` and stored
    /// through ``AirportRecordMapper``, by `policy`.
    ///
    /// ```swift
    /// let loader = try ResourceLoader(engine: engine)
    /// let card = try await loader.load(.airport("ENBR"), mappedBy: AirportCardMapper()).first
    /// ```
    public static func airport(_ icao: String, policy: RefreshPolicy = .cacheFirst) -> Self {
        Resource(one: AirportsAPI.Get(icao: icao), mapper: AirportRecordMapper(), where: \.icao == icao, policy: policy)
    }
}

/// An airport as a screen shows it: a title with its codes, where it is, its height in metres.
public struct AirportCard: Sendable, Equatable {
    /// The ICAO code.
    public var icao: String
    /// The name with the IATA code when there is one, e.g. `Bergen Flesland (BGO)`.
    public var title: String
    /// The city and country, e.g. `Bergen, NO` (the country alone without a city).
    public var place: String
    /// The elevation in whole metres.
    public var elevationMeters: Int
}

/// Turns stored airports into ``AirportCard``s.
public struct AirportCardMapper: DomainMapper {
    /// A mapper; it holds no state.
    public init() {}

    /// The card of `airport`.
    public func model(from airport: Loaded<Airport>) -> AirportCard {
        AirportCard(
            icao: airport.icao, title: airport.iata.map { "\(airport.name) (\($0))" } ?? airport.name,
            place: airport.city.map { "\($0), \(airport.country)" } ?? airport.country,
            elevationMeters: Int((airport.elevation * 0.3048).rounded()))
    }
}
