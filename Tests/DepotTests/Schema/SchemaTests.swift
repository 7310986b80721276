import Depot
import DepotTesting
import Foundation
import Testing

struct Location: Equatable, Sendable {
    var latitude: Double
    var longitude: Double
}

/// Columns reaching into a nested struct still rebuild values in place.
struct Station: Entity, Equatable {
    var id: String
    var location: Location
    var note: String?

    static let schema = Schema<Station>("stations", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.location.latitude, "lat")
        Column(\.location.longitude, "lon")
        Column(\.note, "note")
    }
}

/// A type with a property that is not stored, rebuilt by a custom decoder.
struct Cached: Entity, Equatable {
    var id: Int
    var title: String
    var isSelected = false

    static let schema = Schema<Cached>(
        "cached", primaryKey: \.id, decode: { row in try Cached(id: row[\.id], title: row[\.title]) }
    ) {
        Column(\.id, "id")
        Column(\.title, "title")
    }
}

struct MissingNested: Entity {
    var id: Int
    var location: Location
    static let schema = Schema<MissingNested>("missing_nested", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.location.latitude, "lat")
    }
}

struct OptionalKey: Entity {
    var id: Int?
    static let schema = Schema<OptionalKey>("optional_key", primaryKey: \.id) { Column(\.id, "id") }
}

@Suite("Schema")
struct SchemaTests {
    @Test("columns into a nested struct cover it, and rows round-trip")
    func nestedStruct() async throws {
        #expect(Station.schema.validationError == nil)
        let store = InMemoryStore()
        let stations = store.repository(Station.self)
        let station = Station(id: "a", location: Location(latitude: 1.5, longitude: -2), note: nil)
        try await stations.insert(station)
        #expect(try await stations.find("a") == station)
        #expect(try await stations.count(where: \.location.latitude > 1) == 1)
    }

    @Test("a custom decoder rebuilds types with properties that are not columns")
    func customDecoder() async throws {
        #expect(Cached.schema.validationError == nil)
        let store = InMemoryStore()
        let cached = store.repository(Cached.self)
        try await cached.insert(Cached(id: 1, title: "one", isSelected: true))
        #expect(try await cached.find(1) == Cached(id: 1, title: "one", isSelected: false))
    }

    @Test("a nested property without a column is named in the validation error")
    func missingNestedColumn() throws {
        let error = try #require(MissingNested.schema.validationError)
        #expect(error.kind == .invalidSchema)
        #expect(error.message.contains("'location.longitude' has no column"))
    }

    @Test("an optional primary key is rejected")
    func optionalKey() throws {
        let error = try #require(OptionalKey.schema.validationError)
        #expect(error.message.contains("primary-key column 'id' is optional"))
    }

    @Test("the table description lists columns, types, nullability and key")
    func tableDescription() {
        let table = TestAirport.schema.table
        #expect(table.name == "airports")
        #expect(table.primaryKey == ["icao"])
        #expect(table.columns.first { $0.name == "iata" } == .init(name: "iata", type: .text, isNullable: true))
        #expect(
            table.columns.first { $0.name == "elevation" } == .init(name: "elevation", type: .double, isNullable: false)
        )
        #expect(AllTypes.schema.table.columns.first { $0.name == "runway" }?.type == .json)
        #expect(AllTypes.schema.table.columns.first { $0.name == "length" }?.type == .integer)
    }
}
