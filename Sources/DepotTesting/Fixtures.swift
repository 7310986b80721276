import Depot
import Foundation

/// An airport-shaped entity for conformance tests and examples: the row type of most store cases.
///
/// The write, query, transaction, mapper and observation cases of ``StoreConformance`` run on it,
/// mostly over the ten rows of ``TestAirport/sample``.
#if DEPOT_MACRO_FIXTURES
    @Entity("airports")
#endif
public struct TestAirport: Entity, Equatable, Hashable {
    /// The ICAO code, such as `ENGM`: the primary key (column `icao`).
    @PrimaryKey public var icao: String
    /// The IATA code, such as `OSL`; `nil` when the airport has none (two sample rows), for the `NULL` cases.
    public var iata: String?
    /// The airport's name; sample names mix case and non-ASCII letters, and one holds `%` and `_`.
    public var name: String
    /// The city it serves; `nil` when unknown.
    public var city: String?
    /// The ISO 3166-1 alpha-2 code of its country, such as `NO`.
    public var country: String
    /// The elevation in feet above sea level: negative below it, and not always whole.
    public var elevation: Double
    /// The latitude in degrees, north positive (column `lat`).
    @Column("lat") public var latitude: Double
    /// The longitude in degrees, east positive (column `lon`).
    @Column("lon") public var longitude: Double

    /// Creates an airport; `iata` and `city` default to `nil`, the elevation and coordinates to 0.
    public init(
        icao: String, iata: String? = nil, name: String, city: String? = nil, country: String,
        elevation: Double = 0, latitude: Double = 0, longitude: Double = 0
    ) {
        self.icao = icao
        self.iata = iata
        self.name = name
        self.city = city
        self.country = country
        self.elevation = elevation
        self.latitude = latitude
        self.longitude = longitude
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `airports`, keyed by `icao`; `latitude` and `longitude` are stored as `lat` and `lon`.
        public static let schema = Schema<TestAirport>("airports", primaryKey: \.icao) {
            Column(\.icao, "icao")
            Column(\.iata, "iata")
            Column(\.name, "name")
            Column(\.city, "city")
            Column(\.country, "country")
            Column(\.elevation, "elevation")
            Column(\.latitude, "lat")
            Column(\.longitude, "lon")
        }
    #endif

    /// A small, fixed set of real airports (with a few edge cases) used across the suite.
    public static let sample: [TestAirport] = [
        TestAirport(
            icao: "ENGM", iata: "OSL", name: "Oslo Gardermoen Airport", city: "Oslo", country: "NO", elevation: 681,
            latitude: 60.193901, longitude: 11.1004),
        TestAirport(
            icao: "ENBR", iata: "BGO", name: "Bergen Airport Flesland", city: "Bergen", country: "NO", elevation: 170,
            latitude: 60.2934, longitude: 5.21814),
        TestAirport(
            icao: "ENAL", iata: "AES", name: "Ålesund Airport Vigra", city: "Ålesund", country: "NO", elevation: 69,
            latitude: 62.5625, longitude: 6.1197),
        TestAirport(
            icao: "ENZZ", iata: nil, name: "Test Strip", city: nil, country: "NO", elevation: 12.5, latitude: 61,
            longitude: 10),
        TestAirport(
            icao: "EPPO", iata: "POZ", name: "Poznań-Ławica Airport", city: "Poznań", country: "PL", elevation: 308,
            latitude: 52.421001, longitude: 16.8263),
        TestAirport(
            icao: "BIIS", iata: "IFJ", name: "Ísafjörður Airport", city: "Ísafjörður", country: "IS", elevation: 8,
            latitude: 66.058098, longitude: -23.1353),
        TestAirport(
            icao: "SBSP", iata: "CGH", name: "SÃO PAULO CONGONHAS", city: "São Paulo", country: "BR", elevation: 2631,
            latitude: -23.6261, longitude: -46.6564),
        TestAirport(
            icao: "EDDM", iata: "MUC", name: "Munich Airport", city: "München", country: "DE", elevation: 1487,
            latitude: 48.353802, longitude: 11.7861),
        TestAirport(
            icao: "EDXS", iata: nil, name: "Flugplatz Straße 100%_off", city: "Straße", country: "DE",
            elevation: -3.25, latitude: 54.0, longitude: 9.0),
        TestAirport(
            icao: "KDEN", iata: "DEN", name: "Denver International Airport", city: "Denver", country: "US",
            elevation: 5431, latitude: 39.861698, longitude: -104.672997),
    ]
}

/// A surface kind: a `RawRepresentable` attribute, stored as its raw text by ``AllTypes``.
public enum Surface: String, StorableValue, Sendable, Codable {
    case asphalt, grass, gravel
}

/// A length in feet: a custom type stored through a primitive (an `Int` column), for ``AllTypes``.
public struct Feet: StorableAsPrimitive, Equatable, Hashable {
    /// The length in whole feet; a store only ever gives back values of 0 or more.
    public var value: Int
    /// Creates a length of `value` feet, without checking it.
    public init(_ value: Int) { self.value = value }
    /// Rebuilds a length from its stored form.
    ///
    /// - Parameter primitive: The stored number of feet.
    /// - Throws: An error when `primitive` is negative, so reading such a row fails.
    public init(primitive: Int) throws {
        guard primitive >= 0 else { throw FeetError.negative }
        value = primitive
    }
    /// The stored form: the number of feet, in an integer column.
    public var primitive: Int { value }
    enum FeetError: Error { case negative }
}

/// A runway: a `Codable` attribute stored as JSON, for ``AllTypes``.
public struct Runway: Codable, Equatable, Hashable, StorableAsJSON {
    /// The designator, such as `01L/19R`; the fixtures include an empty one and one with quotes and a backslash.
    public var designator: String
    /// The length in meters; not validated (the fixtures store 0 and -1).
    public var lengthMeters: Int
    /// The names of its lighting systems, such as `edge` and `centre`; may be empty.
    public var lights: [String]
    /// Creates a runway.
    public init(designator: String, lengthMeters: Int, lights: [String]) {
        self.designator = designator
        self.lengthMeters = lengthMeters
        self.lights = lights
    }
}

/// An entity holding one attribute of every supported type, optional and not.
///
/// The value cases of ``StoreConformance`` check that ``AllTypes/extremes`` round-trips exactly
/// and compares correctly; the partial-update cases patch its optional columns.
#if DEPOT_MACRO_FIXTURES
    @Entity("all_types")
#endif
public struct AllTypes: Entity, Equatable {
    /// The primary key (column `id`): 1, 2 and 3 in ``AllTypes/extremes``.
    @PrimaryKey public var id: Int
    /// A `Bool` (column `bool`).
    public var bool: Bool
    /// An `Int8` (column `int8`): `.min`, `.max` and 0 in the extremes.
    public var int8: Int8
    /// An `Int16` (column `int16`): `.min`, `.max` and 0 in the extremes.
    public var int16: Int16
    /// An `Int32` (column `int32`): `.min`, `.max` and 0 in the extremes.
    public var int32: Int32
    /// An `Int64` (column `int64`): `.min`, `.max` and 0 in the extremes.
    public var int64: Int64
    /// A `UInt8` (column `uint8`): `.max`, `.min` and 0 in the extremes.
    public var uint8: UInt8
    /// A `UInt16` (column `uint16`): `.max`, `.min` and 0 in the extremes.
    public var uint16: UInt16
    /// A `UInt32` (column `uint32`): `.max`, `.min` and 0 in the extremes.
    public var uint32: UInt32
    /// A `Float` (column `float`): the smallest positive, the most negative finite value, and 0.1.
    public var float: Float
    /// A `Double` (column `double`): the most negative finite, the smallest positive value, and 0.1.
    public var double: Double
    /// A `Decimal` of up to 30 significant digits (column `decimal`).
    public var decimal: Decimal
    /// A `Date`, kept to the microsecond (column `date`); one of the extremes is before 1970.
    public var date: Date
    /// A `String`, compared byte for byte: emoji, an empty string, combining marks, tab and newline (column `string`).
    public var string: String
    /// Bytes (column `data`): empty, every byte value 0–255, and a single zero byte in the extremes.
    public var data: Data
    /// A `UUID` (column `uuid`).
    public var uuid: UUID
    /// A `URL`, with percent escapes, a fragment and a non-ASCII host in the extremes (column `url`).
    public var url: URL
    /// An enumeration stored as its raw value, ``Surface`` (column `surface`).
    public var surface: Surface
    /// A custom type stored through an integer, ``Feet`` (column `length`).
    public var length: Feet
    /// A `Codable` value stored as JSON, ``Runway`` (column `runway`).
    public var runway: Runway
    /// An optional `Int`; `nil` stores `NULL` (column `optional_int`).
    @Column("optional_int") public var optionalInt: Int?
    /// An optional `String`; `nil` stores `NULL`, unlike the empty string (column `optional_string`).
    @Column("optional_string") public var optionalString: String?
    /// An optional `Date`, kept to the microsecond; `nil` stores `NULL` (column `optional_date`).
    @Column("optional_date") public var optionalDate: Date?
    /// An optional `Decimal`; `nil` stores `NULL` (column `optional_decimal`).
    @Column("optional_decimal") public var optionalDecimal: Decimal?
    /// Optional bytes; `nil` stores `NULL`, unlike empty data (column `optional_data`).
    @Column("optional_data") public var optionalData: Data?
    /// An optional `UUID`; `nil` stores `NULL` (column `optional_uuid`).
    @Column("optional_uuid") public var optionalUUID: UUID?
    /// An optional ``Surface``; `nil` stores `NULL` (column `optional_surface`).
    @Column("optional_surface") public var optionalSurface: Surface?
    /// An optional ``Runway``, stored as JSON; `nil` stores `NULL` (column `optional_runway`).
    @Column("optional_runway") public var optionalRunway: Runway?

    #if !DEPOT_MACRO_FIXTURES
        /// Table `all_types`, keyed by `id`: one column per property, named in snake case.
        public static let schema = Schema<AllTypes>("all_types", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.bool, "bool")
            Column(\.int8, "int8")
            Column(\.int16, "int16")
            Column(\.int32, "int32")
            Column(\.int64, "int64")
            Column(\.uint8, "uint8")
            Column(\.uint16, "uint16")
            Column(\.uint32, "uint32")
            Column(\.float, "float")
            Column(\.double, "double")
            Column(\.decimal, "decimal")
            Column(\.date, "date")
            Column(\.string, "string")
            Column(\.data, "data")
            Column(\.uuid, "uuid")
            Column(\.url, "url")
            Column(\.surface, "surface")
            Column(\.length, "length")
            Column(\.runway, "runway")
            Column(\.optionalInt, "optional_int")
            Column(\.optionalString, "optional_string")
            Column(\.optionalDate, "optional_date")
            Column(\.optionalDecimal, "optional_decimal")
            Column(\.optionalData, "optional_data")
            Column(\.optionalUUID, "optional_uuid")
            Column(\.optionalSurface, "optional_surface")
            Column(\.optionalRunway, "optional_runway")
        }
    #endif

    /// Values at the extremes of every type: minimums and maximums, the smallest magnitudes, empty and
    /// non-ASCII text. Row 2 has every optional `nil`; row 1 has none.
    public static let extremes: [AllTypes] = [
        AllTypes(
            id: 1, bool: true, int8: .min, int16: .min, int32: .min, int64: .min, uint8: .max, uint16: .max,
            uint32: .max, float: .leastNonzeroMagnitude, double: -.greatestFiniteMagnitude,
            decimal: fixtureDecimal("12345678901234567890.1234567890"),
            date: Date(microseconds: 721_692_800_000_250), string: "Ålesund — Poznań 🛫 Ísafjörður",
            data: Data(), uuid: fixtureUUID("00000000-0000-0000-0000-000000000000"),
            url: fixtureURL("https://example.com/a%20b?q=ø&x=1#frag"), surface: .asphalt, length: Feet(0),
            runway: Runway(designator: "01L/19R", lengthMeters: 3600, lights: ["edge", "centre"]),
            optionalInt: Int(Int64.max), optionalString: "",
            optionalDate: Date(microseconds: -125),
            optionalDecimal: fixtureDecimal("-0.000000000000000000000000000001"), optionalData: Data([0, 255, 0]),
            optionalUUID: fixtureUUID("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"), optionalSurface: .grass,
            optionalRunway: Runway(designator: "\"quoted\" \\ é", lengthMeters: 0, lights: [])),
        AllTypes(
            id: 2, bool: false, int8: .max, int16: .max, int32: .max, int64: .max, uint8: .min, uint16: .min,
            uint32: .min, float: -.greatestFiniteMagnitude, double: .leastNonzeroMagnitude,
            decimal: fixtureDecimal("-99999999999999999999999999999.9"),
            date: Date(microseconds: -979_541_767_000_001), string: "",
            data: Data((0...255).map { UInt8($0) }), uuid: fixtureUUID("123E4567-E89B-12D3-A456-426614174000"),
            url: fixtureURL("file:///tmp/x"), surface: .gravel, length: Feet(Int(Int32.max)),
            runway: Runway(designator: "", lengthMeters: -1, lights: ["ü"]),
            optionalInt: nil, optionalString: nil, optionalDate: nil, optionalDecimal: nil, optionalData: nil,
            optionalUUID: nil, optionalSurface: nil, optionalRunway: nil),
        AllTypes(
            id: 3, bool: true, int8: 0, int16: 0, int32: 0, int64: 0, uint8: 0, uint16: 0, uint32: 0,
            float: 0.1, double: 0.1, decimal: 0, date: Date(timeIntervalSinceReferenceDate: 0),
            string: "e\u{301} vs é, NUL-free, tab\tnewline\n", data: Data([0]), uuid: UUID(),
            url: fixtureURL("https://日本.example/パス"), surface: .grass, length: Feet(42),
            runway: Runway(designator: "09", lengthMeters: 1, lights: ["a", "b"]),
            optionalInt: Int(Int64.min), optionalString: "Straße", optionalDate: Date(timeIntervalSince1970: 0.5),
            optionalDecimal: fixtureDecimal("0.1"), optionalData: Data(), optionalUUID: nil, optionalSurface: nil,
            optionalRunway: nil),
    ]
}

/// An entity with a two-column primary key: for the composite-key cases, and as a second table in
/// the transaction and observation cases.
#if DEPOT_MACRO_FIXTURES
    @Entity("readings")
#endif
public struct Reading: Entity, Equatable {
    /// The station that took the reading: the first key column (column `station`).
    @PrimaryKey public var station: String
    /// The reading's number at its station: the second key column (column `sequence`).
    @PrimaryKey public var sequence: Int
    /// The measured value; `nil` stores `NULL` (column `value`).
    public var value: Double?

    /// Creates a reading.
    public init(station: String, sequence: Int, value: Double?) {
        self.station = station
        self.sequence = sequence
        self.value = value
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `readings`, keyed by `station`, then `sequence`.
        public static let schema = Schema<Reading>("readings", primaryKey: \.station, \.sequence) {
            Column(\.station, "station")
            Column(\.sequence, "sequence")
            Column(\.value, "value")
        }
    #endif
}

/// A measurement keyed by site and number, with required columns besides its key: patches that
/// leave `unit` out can only update stored rows.
struct Sample: Entity, Equatable {
    var site: String
    var number: Int
    var value: Double
    var unit: String

    static let schema = Schema<Sample>("conformance_samples", primaryKey: \.site, \.number) {
        Column(\.site, "site")
        Column(\.number, "number")
        Column(\.value, "value")
        Column(\.unit, "unit")
    }
}

private func fixtureDecimal(_ text: String) -> Decimal {
    guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
        preconditionFailure("fixture decimal '\(text)' does not parse")
    }
    return value
}

private func fixtureUUID(_ text: String) -> UUID {
    guard let value = UUID(uuidString: text) else { preconditionFailure("fixture UUID '\(text)' does not parse") }
    return value
}

private func fixtureURL(_ text: String) -> URL {
    guard let value = URL(string: text) else { preconditionFailure("fixture URL '\(text)' does not parse") }
    return value
}
