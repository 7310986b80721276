import Depot
import DepotSQL
import DepotSQLite
import Foundation
import Testing

@Suite("README: queries")
struct QueriesSampleTests {
    static let airports = [
        Airport(
            icao: "ENGM", iata: "OSL", name: "Oslo", country: "NO", elevation: 681, latitude: 60.19, longitude: 11.1),
        Airport(
            icao: "ENBR", iata: "BGO", name: "Bergen", country: "NO", elevation: 170, latitude: 60.29, longitude: 5.2),
        Airport(icao: "ENZZ", iata: nil, name: "Strip", country: "NO", elevation: 0, latitude: 62.5, longitude: 6.1),
        Airport(
            icao: "ESSA", iata: "ARN", name: "Arlanda", country: "SE", elevation: 137, latitude: 59.65, longitude: 17.9),
        Airport(
            icao: "ESGG", iata: "GOT", name: "Landvetter", country: "SE", elevation: 506, latitude: 57.66,
            longitude: 12.3),
        Airport(
            icao: "EKCH", iata: "CPH", name: "Kastrup", country: "DK", elevation: 17, latitude: 55.6, longitude: 12.6),
    ]

    @Test("the aggregate, projection, geo, sorting and update tours answer the same on the in-memory and SQLite stores")
    func aggregateTourAnswers() async throws {
        for store in [InMemoryStore(), try SQLiteStore.temporary()] as [any Store] {
            try await store.repository(Country.self).insert(
                ["NO", "SE", "DK"].map { Country(code: $0, name: $0, continent: "EU") })
            let airports = store.repository(Airport.self)
            try await airports.insert(Self.airports)
            let busiest = try await aggregateTour(airports: airports)
            // Elevation > 0 leaves ENZZ out: Norway and Sweden have two each, Denmark one.
            #expect(
                busiest == [
                    CountryStats(country: "NO", airports: 2, highest: 681),
                    CountryStats(country: "SE", airports: 2, highest: 506),
                ])
            #expect(try await airports.average(\.elevation, where: \.country == "NO") == 851.0 / 3)
            #expect(
                try await projectionTour(airports: airports) == [
                    AirportLabel(code: "ENBR", name: "Bergen"), AirportLabel(code: "ENGM", name: "Oslo"),
                    AirportLabel(code: "ENZZ", name: "Strip"),
                ])
            let (nearest, around) = try await geoTour(airports: airports)
            #expect(nearest.map(\.icao) == ["ENGM", "ESGG", "ENBR", "ENZZ", "ESSA"])
            #expect(around == 1)
            let sections = try await sortingTour(airports: airports)
            #expect(sections.map(\.key) == ["DK", "NO", "SE"])
            #expect(sections[1].items.map(\.name) == ["Bergen", "Oslo", "Strip"])
            #expect(try await updateTour(airports: airports) == 3)
            #expect(try await airports.find("ENGM")?.elevation == 691)
            #expect(try await airports.find("ENZZ")?.elevation == 9)
            #expect(try await airports.find("ENZZ")?.name == "Unnamed strip")
        }
    }

    @Test("the search tour finds by word prefixes through the index on SQLite, and without one in memory")
    func searchTourFinds() async throws {
        for store in [InMemoryStore(), try SQLiteStore.temporary()] as [any MigratableStore] {
            try await store.repository(Country.self).insert(
                ["NO", "SE", "DK"].map { Country(code: $0, name: $0, continent: "EU") })
            try await store.repository(Airport.self).insert(
                Self.airports + [
                    Airport(
                        icao: "ENXX", iata: nil, name: "Oslo Gardermoen", country: "NO", elevation: 1, latitude: 60,
                        longitude: 11)
                ])
            #expect(try await searchTour(store: store).map(\.icao) == ["ENXX"])
        }
    }

    @Test("the SQL tour runs on SQLite; the in-memory store does not offer SQL")
    func sqlTourRunsOnSQLite() async throws {
        let store = try SQLiteStore.temporary()
        try await store.repository(Country.self).insert(
            ["NO", "SE", "DK"].map { Country(code: $0, name: $0, continent: "EU") })
        try await store.repository(Airport.self).insert(Self.airports)
        let counts = try await sqlTour(store: store)
        #expect(counts.map(\.country) == ["NO", "SE", "DK"])
        #expect(counts.map(\.n) == [3, 2, 1])
        let memory: any Store = InMemoryStore()
        #expect(!(memory is any SQLRunning))
    }

    @Test("the SQL the README shows for the grouping and the update is the SQL the renderer writes")
    func groupingSQLIsTheRenderedOne() throws {
        let query = AggregateQuery(
            table: Airport.schema.table, predicate: (\Airport.elevation > 0).node, groupBy: ["country"],
            aggregates: [.init(.count, nil), .init(.max, "elevation")],
            having: .compare(.init(.count, nil), .greaterOrEqual, .integer(2)),
            ordering: [.aggregate(.init(.count, nil), descending: true)], limit: 10)
        let readme = try String(contentsOf: ReadmeSamples.root.appendingPathComponent("README.md"), encoding: .utf8)
        let flattened = readme.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let update = UpdateQuery(
            table: Airport.schema.table, predicate: (\Airport.country == "NO").node,
            assignments: [.init("elevation", .adding(column: "elevation", .double(10)))])
        for (name, dialect) in [("SQLite:", SQLiteDialect() as any SQLDialect), ("PostgreSQL:", PostgresDialect())] {
            for sql in [
                SQLRenderer(dialect: dialect).aggregate(query).sql, SQLRenderer(dialect: dialect).update(update).sql,
            ] {
                #expect(flattened.contains("\(name) \(sql)"), "the README shows \(sql)")
            }
        }
    }
}
