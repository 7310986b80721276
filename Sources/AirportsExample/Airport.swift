import Depot

/// One of the 28,298 real airports in the bundled `airports.csv` (MIT, see `airports.LICENSE`).
public struct Airport: Entity, Equatable, Hashable {
    /// The four-character ICAO code, e.g. `ENGM`; the primary key.
    public var icao: String
    /// The three-letter IATA code, e.g. `OSL`; `nil` for the many airports without one.
    public var iata: String?
    /// The airport's name, e.g. `Oslo Airport, Gardermoen`.
    public var name: String
    /// The city it serves; `nil` when the data set names none.
    public var city: String?
    /// The state, province or region, e.g. `Akershus` (column `subd`); `nil` when unknown.
    public var subdivision: String?
    /// The two-letter ISO 3166-1 country code, e.g. `NO`.
    public var country: String
    /// Feet above sea level; not always a whole number.
    public var elevation: Double
    /// Latitude in degrees, -90…90, north positive (column `lat`).
    public var latitude: Double
    /// Longitude in degrees, -180…180, east positive (column `lon`).
    public var longitude: Double
    /// The IANA time zone, e.g. `Europe/Oslo` (column `tz`); `nil` when unknown.
    public var timeZone: String?
    /// The national location identifier, e.g. the FAA code `00C` of `K00C` (column `lid`); `nil` when
    /// there is none.
    public var localCode: String?

    /// An airport from its fields, taken as given (``AirportsCSV`` checks them on import).
    public init(
        icao: String, iata: String?, name: String, city: String?, subdivision: String?, country: String,
        elevation: Double, latitude: Double, longitude: Double, timeZone: String?, localCode: String?
    ) {
        self.icao = icao
        self.iata = iata
        self.name = name
        self.city = city
        self.subdivision = subdivision
        self.country = country
        self.elevation = elevation
        self.latitude = latitude
        self.longitude = longitude
        self.timeZone = timeZone
        self.localCode = localCode
    }

    /// The `airports` table, keyed by `icao`, with the CSV's column names (`subd`, `lat`, `lon`, …).
    public static let schema = Schema<Airport>("airports", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.iata, "iata")
        Column(\.name, "name")
        Column(\.city, "city")
        Column(\.subdivision, "subd")
        Column(\.country, "country")
        Column(\.elevation, "elevation")
        Column(\.latitude, "lat")
        Column(\.longitude, "lon")
        Column(\.timeZone, "tz")
        Column(\.localCode, "lid")
    }

    /// The airport's position.
    public var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}
