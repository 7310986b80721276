import AirportsExample
import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// A country of the bundled data (the CSV gives codes only).
struct Nation: Entity, Equatable {
    var code: String
    static let schema = Schema<Nation>("nations", primaryKey: \.code) { Column(\.code, "code") }
    static let fields = ToMany(Field.nation)
    static var relations: [any Relation<Nation>] { [fields] }
}

/// An airport of the bundled data, referencing its country.
struct Field: Entity, Equatable {
    var icao: String
    var name: String
    var nation: String
    var elevation: Double
    static let schema = Schema<Field>("fields", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.name, "name")
        Column(\.nation, "nation")
        Column(\.elevation, "elevation")
    }
    static let nation = ToOne<Field, Nation>(\.nation, onDelete: .cascade)
    static var relations: [any Relation<Field>] { [nation] }
}

/// Relations over the 28,298 real airports, checked against answers computed from the CSV rows.
@Suite("Relations over the airports data", .timeLimit(.minutes(10)))
struct AirportsRelationTests {
    static let fields = bundledAirports.map {
        Field(icao: $0.icao, name: $0.name, nation: $0.country, elevation: $0.elevation)
    }
    static let nations = Set(bundledAirports.map(\.country)).sorted(by: icaoOrder).map(Nation.init(code:))

    func check(_ store: any Store) async throws {
        try await store.write { tx in
            try await tx.repository(Nation.self).insert(Self.nations)
            try await tx.repository(Field.self).insert(Self.fields)
        }
        // The three highest airports above 5,000 ft of every country, in one include.
        let loaded = try await store.repository(Nation.self).fetch(
            including: [Nation.fields.filter(\.elevation > 5000).sorted(by: .descending(\.elevation)).limit(3)])
        #expect(loaded.count == Self.nations.count)
        for nation in loaded {
            let expected = Self.fields.filter { $0.nation == nation.code && $0.elevation > 5000 }
                .sorted { ($0.elevation, $1.icao) > ($1.elevation, $0.icao) }.prefix(3).map(\.icao)
            #expect(try nation[Nation.fields].map(\.icao) == Array(expected), "highest of \(nation.code)")
        }
        // Countries none of whose airports lie above 10,000 ft.
        let low = try await store.repository(Nation.self).count(where: Nation.fields.none(\.elevation > 10_000))
        let high = Set(Self.fields.filter { $0.elevation > 10_000 }.map(\.nation))
        #expect(low == Self.nations.count - high.count)
        // Every airport with its country: one query for 28,298 airports, one for their countries.
        let withNation = try await store.repository(Field.self).fetch(
            where: \.elevation > 8000, including: [Field.nation])
        #expect(withNation.count == Self.fields.filter { $0.elevation > 8000 }.count)
        #expect(try withNation.allSatisfy { try $0[Field.nation]?.code == $0.nation })
        // Removing a country removes its airports (cascade), in one transaction.
        #expect(try await store.repository(Nation.self).remove("NO"))
        #expect(try await store.repository(Field.self).count() == Self.fields.count { $0.nation != "NO" })
    }

    @Test("includes, predicates across relations and cascades agree with the CSV on an SQLite file")
    func sqlite() async throws {
        #expect(Self.fields.count == 28_298)
        try await check(try SQLiteStore.temporary())
    }

    @Test("the in-memory store gives the same answers")
    func inMemory() async throws {
        try await check(InMemoryStore())
    }

    @Test(
        "PostgreSQL gives the same answers",
        .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"))
    func postgres() async throws {
        let store = try PostgresStore(url: try PostgresEnvironment.scratchURL())
        try await withCleanup {
            try await check(store)
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }
}
