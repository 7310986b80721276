import Depot

/// One of the 28,298 real airports in the bundled `airports.csv` (MIT, see `airports.LICENSE`).
public struct Airport: Entity, Equatable, Hashable {
    public var icao: String
    public var iata: String?
    public var name: String
    public var city: String?
    public var subdivision: String?
    public var country: String
    /// Feet above sea level; not always a whole number.
    public var elevation: Double
    public var latitude: Double
    public var longitude: Double
    public var timeZone: String?
    public var localCode: String?

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
