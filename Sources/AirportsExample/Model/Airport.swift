import Depot

/// One of the 28,298 real airports in the bundled `airports.csv` (MIT, see `airports.LICENSE`): the
/// `airports` table, keyed by `icao`, with the CSV's column names (`subd`, `lat`, `lon`, …).
@Entity("airports")
public struct Airport: Equatable, Hashable {
    /// The four-character ICAO code, e.g. `ENGM`; the primary key.
    @PrimaryKey public var icao: String
    /// The three-letter IATA code, e.g. `OSL`; `nil` for the many airports without one.
    public var iata: String?
    /// The airport's name, e.g. `Oslo Airport, Gardermoen`.
    public var name: String
    /// The city it serves; `nil` when the data set names none.
    public var city: String?
    /// The state, province or region, e.g. `Akershus` (column `subd`); `nil` when unknown.
    @Column("subd") public var subdivision: String?
    /// The two-letter ISO 3166-1 country code, e.g. `NO`.
    public var country: String
    /// Feet above sea level; not always a whole number.
    public var elevation: Double
    /// Latitude in degrees, -90…90, north positive (column `lat`).
    @Column("lat") public var latitude: Double
    /// Longitude in degrees, -180…180, east positive (column `lon`).
    @Column("lon") public var longitude: Double
    /// The IANA time zone, e.g. `Europe/Oslo` (column `tz`); `nil` when unknown.
    @Column("tz") public var timeZone: String?
    /// The national location identifier, e.g. the FAA code `00C` of `K00C` (column `lid`); `nil` when
    /// there is none.
    @Column("lid") public var localCode: String?

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

    /// The airport's position.
    public var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}
