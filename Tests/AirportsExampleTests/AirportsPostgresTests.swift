import AirportsExample
import Depot
import DepotHTTP
import DepotPostgres
import DepotSQL
import DepotSQLite
import DepotSync
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

@Suite(
    "Airports on PostgreSQL", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct AirportsPostgresTests {
    /// A PostgreSQL URL on a scratch schema, and a store on it; the schema is dropped afterwards.
    func withPostgres(_ body: (String, PostgresStore) async throws -> Void) async throws {
        let url = try PostgresEnvironment.scratchURL()
        let store = try PostgresStore(url: url)
        try await withCleanup {
            try await body(url, store)
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }

    @Test("import, queries, the API and a sync on PostgreSQL give the answers computed from the CSV")
    func endToEnd() async throws {
        try await withPostgres { _, store in
            let summary = try await AirportImporter.run(csv: try #require(AirportsCSV.bundledURL), into: store)
            #expect(summary.rows == 28_298)
            let airports = store.repository(Airport.self)

            let found = try await AirportQuery(contains: "ÅLESUND", limit: 50).run(on: airports).map(\.airport.icao)
            #expect(found == referenceSearch("ålesund"))

            let oslo = (59.9139, 10.7522)
            let nearest = try await AirportQuery(near: Coordinate(latitude: oslo.0, longitude: oslo.1), limit: 10)
                .run(on: airports)
            #expect(nearest.map(\.airport.icao) == referenceNearest(oslo.0, oslo.1, limit: 10).map(\.icao))

            let server = try await AirportsServer.start(store: store, access: .testing)
            try await withCleanup {
                let local = try SQLiteStore.temporary()
                let engine = SyncEngine.airports(
                    store: local, client: APIClient(baseURL: server.baseURL, configuration: .patient), country: "NO")
                try await engine.sync()
                #expect(try await RawHTTP.patch(server, "ENGM", #"{"name": "Gardermoen", "lid": "GEN"}"#).status == 200)
                let next = try await engine.sync()
                #expect(next.pulledRows == 1)
                #expect(try await local.repository(Airport.self).fetchAll() == airports.fetch(where: \.country == "NO"))
                #expect(try await local.repository(Airport.self).find("ENGM")?.localCode == "GEN")
            } cleanup: {
                await server.stop()
            }
        }
    }

    @Test("PATCHes through two servers on one database at once all land, each logged with a sequence of its own")
    func concurrentPatches() async throws {
        try await withPostgres { url, store in
            let codes = (0..<6).map { "ZZ0\($0)" }
            try await store.repository(Airport.self).insert(
                codes.map {
                    Airport(
                        icao: $0, iata: nil, name: "Field", city: nil, subdivision: nil, country: "ZZ", elevation: 0,
                        latitude: 0, longitude: 0, timeZone: nil, localCode: nil)
                })
            let other = try PostgresStore(url: url)
            let first = try await AirportsServer.start(store: store, access: .testing)
            let second = try await AirportsServer.start(store: other, access: .testing)
            try await withCleanup {
                let answers = try await withThrowingTaskGroup(of: RawHTTP.Answer.self) { group in
                    for call in 0..<24 {
                        let server = call % 2 == 0 ? first : second
                        let body = #"{"name": "Renamed \#(call)"}"#
                        group.addTask { try await RawHTTP.patch(server, codes[call % codes.count], body) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let failed = answers.filter { $0.status != 200 }.map { String(decoding: $0.body, as: UTF8.self) }
                #expect(failed.isEmpty, "\(failed)")
                let log = try await store.sql("SELECT sequence FROM depot_sync_log ORDER BY sequence")
                #expect(log.rows.map(\.first) == (1...24).map { .integer(Int64($0)) })
            } cleanup: {
                await first.stop()
                await second.stop()
                await other.close()
            }
        }
    }

    @Test("a NUL in a PATCHed text or a query answers 400 naming it, as on SQLite (PostgreSQL refuses NUL in text)")
    func nulIsRefusedAlike() async throws {
        try await withPostgres { _, store in
            try await store.repository(Airport.self).insert(
                Airport(
                    icao: "ZZ00", iata: nil, name: "Field", city: nil, subdivision: nil, country: "ZZ", elevation: 0,
                    latitude: 0, longitude: 0, timeZone: nil, localCode: nil))
            let server = try await AirportsServer.start(store: store, access: .testing)
            try await withCleanup {
                let patch = try await RawHTTP.patch(server, "ZZ00", #"{"name": "a\u0000b"}"#)
                #expect(patch.status == 400)
                #expect(patch.error == "'name' cannot contain NUL (U+0000)")
                let query = try await RawHTTP.get(server, "/airports?q=a%00b")
                #expect(query.status == 400)
                #expect(try await store.repository(Airport.self).find("ZZ00")?.name == "Field")
            } cleanup: {
                await server.stop()
            }
        }
    }

    @Test("the airports executable imports into and queries PostgreSQL with --postgres")
    func commandLine() async throws {
        let binary = try airportsBinary()
        try await withPostgres { url, _ in
            let imported = try await runProcess(binary, ["import", "--postgres", url])
            #expect(imported.status == 0, "\(imported.errors)")
            #expect(imported.output.contains("imported 28298 airports"))
            let password = try #require(URLComponents(string: url)?.password)
            #expect(!imported.output.contains(":\(password)@"), "the password is printed: \(imported.output)")
            #expect(imported.output.contains(":***@"))
            let queried = try await runProcess(
                binary,
                ["query", "--postgres", url, "--country", "NO", "--min-elevation", "1000", "--json", "--limit", "500"])
            #expect(queried.status == 0, "\(queried.errors)")
            let rows = try JSONSerialization.jsonObject(with: Data(queried.output.utf8)) as? [[String: Any]] ?? []
            #expect(
                rows.compactMap { $0["icao"] as? String }
                    == bundledAirports.filter { $0.country == "NO" && $0.elevation >= 1000 }.map(\.icao)
                    .sorted(by: icaoOrder))
        }
    }
}
