import Depot
import Foundation

/// An airport-shaped entity for conformance tests and examples.
public struct TestAirport: Entity, Equatable, Hashable {
    public var icao: String
    public var iata: String?
    public var name: String
    public var city: String?
    public var country: String
    public var elevation: Double
    public var latitude: Double
    public var longitude: Double

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

/// A surface kind: a `RawRepresentable` attribute.
public enum Surface: String, StorableValue, Sendable, Codable {
    case asphalt, grass, gravel
}

/// A length in feet: a custom type stored through a primitive.
public struct Feet: StorableAsPrimitive, Equatable, Hashable {
    public var value: Int
    public init(_ value: Int) { self.value = value }
    public init(primitive: Int) throws {
        guard primitive >= 0 else { throw FeetError.negative }
        value = primitive
    }
    public var primitive: Int { value }
    enum FeetError: Error { case negative }
}

/// A `Codable` attribute stored as JSON.
public struct Runway: Codable, Equatable, Hashable, StorableAsJSON {
    public var designator: String
    public var lengthMeters: Int
    public var lights: [String]
    public init(designator: String, lengthMeters: Int, lights: [String]) {
        self.designator = designator
        self.lengthMeters = lengthMeters
        self.lights = lights
    }
}

/// An entity holding one attribute of every supported type, optional and not.
public struct AllTypes: Entity, Equatable {
    public var id: Int
    public var bool: Bool
    public var int8: Int8
    public var int16: Int16
    public var int32: Int32
    public var int64: Int64
    public var uint8: UInt8
    public var uint16: UInt16
    public var uint32: UInt32
    public var float: Float
    public var double: Double
    public var decimal: Decimal
    public var date: Date
    public var string: String
    public var data: Data
    public var uuid: UUID
    public var url: URL
    public var surface: Surface
    public var length: Feet
    public var runway: Runway
    public var optionalInt: Int?
    public var optionalString: String?
    public var optionalDate: Date?
    public var optionalDecimal: Decimal?
    public var optionalData: Data?
    public var optionalUUID: UUID?
    public var optionalSurface: Surface?
    public var optionalRunway: Runway?

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

    /// Values at the extremes of every type.
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

/// An entity with a two-column primary key.
public struct Reading: Entity, Equatable {
    public var station: String
    public var sequence: Int
    public var value: Double?

    public init(station: String, sequence: Int, value: Double?) {
        self.station = station
        self.sequence = sequence
        self.value = value
    }

    public static let schema = Schema<Reading>("readings", primaryKey: \.station, \.sequence) {
        Column(\.station, "station")
        Column(\.sequence, "sequence")
        Column(\.value, "value")
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
