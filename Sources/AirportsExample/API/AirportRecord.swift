import Depot

/// An airport as the airports API sends and receives it.
///
/// The same type carries a whole airport (`GET /airports`), a partial one (a `PATCH` body, an
/// entry of `GET /changes`): every member but `icao` is a `Field`, so an absent member leaves
/// the stored value alone and `null` clears an optional one. Wire names are the CSV's:
///
/// ```json
/// {"icao": "ENGM", "iata": "OSL", "name": "Oslo Airport, Gardermoen", "city": "Oslo",
///  "subd": "Akershus", "country": "NO", "elevation": 681, "lat": 60.19, "lon": 11.10,
///  "tz": "Europe/Oslo", "lid": null}
/// ```
public struct AirportRecord: Codable, Sendable, Equatable {
    /// The airport's ICAO code: the key, always present.
    public var icao: String
    /// The IATA code; `nil` when the member is absent or `null` (`$iata` tells which).
    @Field public var iata: String?
    /// The name; `nil` when the member is absent (the API refuses `null`).
    @Field public var name: String?
    /// The city; `nil` when the member is absent or `null` (`$city` tells which).
    @Field public var city: String?
    /// The state, province or region (wire name `subd`); `nil` when the member is absent or `null`
    /// (`$subdivision` tells which).
    @Field public var subdivision: String?
    /// The two-letter ISO country code; `nil` when the member is absent (the API refuses `null`).
    @Field public var country: String?
    /// Elevation in feet above sea level; `nil` when the member is absent (the API refuses `null`).
    @Field public var elevation: Double?
    /// Latitude in degrees (wire name `lat`); `nil` when the member is absent (the API refuses `null`).
    @Field public var latitude: Double?
    /// Longitude in degrees (wire name `lon`); `nil` when the member is absent (the API refuses `null`).
    @Field public var longitude: Double?
    /// The IANA time zone (wire name `tz`); `nil` when the member is absent or `null` (`$timeZone`
    /// tells which).
    @Field public var timeZone: String?
    /// The national location identifier (wire name `lid`); `nil` when the member is absent or `null`
    /// (`$localCode` tells which).
    @Field public var localCode: String?
    /// Great-circle distance in kilometres from the `near` point of a `GET /airports?near=` request
    /// (wire name `distance_km`); `nil` in any other record.
    public var distanceKilometers: Double?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case icao, iata, name, city, country, elevation
        case subdivision = "subd"
        case latitude = "lat"
        case longitude = "lon"
        case timeZone = "tz"
        case localCode = "lid"
        case distanceKilometers = "distance_km"
    }

    /// The wire names a request body may carry (everything but `distance_km`).
    public static let memberNames: [String] = CodingKeys.allCases.filter { $0 != .distanceKilometers }
        .map(\.stringValue)

    /// The members that cannot be `null`.
    public static let requiredMemberNames: [String] = ["icao", "name", "country", "elevation", "lat", "lon"]

    /// A record carrying nothing but its key.
    public init(icao: String) { self.icao = icao }

    /// The whole airport: every member present (`null` for a missing optional value).
    public init(_ airport: Airport, distanceKilometers: Double? = nil) {
        icao = airport.icao
        iata = airport.iata
        name = airport.name
        city = airport.city
        subdivision = airport.subdivision
        country = airport.country
        elevation = airport.elevation
        latitude = airport.latitude
        longitude = airport.longitude
        timeZone = airport.timeZone
        localCode = airport.localCode
        self.distanceKilometers = distanceKilometers
    }

    /// The airport a whole record describes.
    ///
    /// - Throws: `DepotError` naming the icao and the missing members when the record is partial.
    public func airport() throws -> Airport {
        guard let name, let country, let elevation, let latitude, let longitude else {
            let missing = [
                ("name", name == nil), ("country", country == nil), ("elevation", elevation == nil),
                ("lat", latitude == nil), ("lon", longitude == nil),
            ].filter(\.1).map(\.0)
            throw DepotError(
                .mappingFailed, "airport '\(icao)' lacks \(missing.joined(separator: ", "))", table: "airports")
        }
        return Airport(
            icao: icao, iata: iata, name: name, city: city, subdivision: subdivision, country: country,
            elevation: elevation, latitude: latitude, longitude: longitude, timeZone: timeZone,
            localCode: localCode)
    }
}

/// Persists airport records, whole or partial: each present member sets its column, an absent
/// one leaves it alone.
///
/// ```swift
/// var record = AirportRecord(icao: "ENGM")     // a PATCH body, say
/// record.name = "Oslo Gardermoen"               // the only member present
/// let records = [record]
/// try await store.repository(Airport.self).persist(records, mapper: AirportRecordMapper())
/// ```
public struct AirportRecordMapper: PatchMapper {
    /// A mapper; it holds no state.
    public init() {}

    /// The patch for `record`'s airport: each present member sets its column (`null` clears an optional
    /// one), each absent member leaves it alone.
    public func patch(from record: AirportRecord) -> Patch<Airport> {
        Patch(key: record.icao).set(\.iata, record.$iata).set(\.name, record.$name).set(\.city, record.$city)
            .set(\.subdivision, record.$subdivision).set(\.country, record.$country)
            .set(\.elevation, record.$elevation).set(\.latitude, record.$latitude)
            .set(\.longitude, record.$longitude).set(\.timeZone, record.$timeZone)
            .set(\.localCode, record.$localCode)
    }
}
