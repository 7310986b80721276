import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Testing

/// `airports sync` as a library call: the engine against the example's DepotSyncServer routes.
@Suite("Airports sync", .timeLimit(.minutes(10)))
struct AirportsSyncTests {
    @Test("the first sync copies every airport; the next carries the rows a PATCH changed and leaves the rest intact")
    func fullThenIncremental() async throws {
        try await withServer { server, serverStore in
            let local = try SQLiteStore.temporary()
            let engine = SyncEngine.airports(
                store: local, client: APIClient(baseURL: server.baseURL, configuration: .patient), pageSize: 4_000)
            let first = try await engine.sync()
            #expect(first.pulledRows == 28_298)
            #expect(first.requests == 8 + 1)  // 8 pages of the copy, then the changes since it began
            #expect(
                try await local.repository(Airport.self).fetchAll()
                    == bundledAirports.sorted { icaoOrder($0.icao, $1.icao) })

            let idle = try await engine.sync()
            #expect(idle.pulledRows == 0 && idle.requests == 1)

            // Two changes to ENGM and one to ENZV, through a plain HTTP client.
            #expect(try await RawHTTP.patch(server, "ENGM", #"{"name": "Gardermoen"}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "ENGM", #"{"iata": null, "elevation": 700.25}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "ENZV", #"{"city": "Sola"}"#).status == 200)
            let next = try await engine.sync()
            #expect(next.pulledRows == 2)  // each changed airport once, whole
            #expect(try await RawHTTP.get(server, "/dataset").object["revision"] as? Int == 3)
            let servers = try await serverStore.repository(Airport.self).fetchAll()
            #expect(try await local.repository(Airport.self).fetchAll() == servers)
            let engm = try await local.repository(Airport.self).find("ENGM")
            #expect(engm?.name == "Gardermoen")
            #expect(engm?.iata == nil)
            #expect(engm?.elevation == 700.25)
            #expect(engm?.city == "Oslo")
        }
    }

    @Test("a country sync keeps that country and follows airports moving in and out of it")
    func countrySync() async throws {
        try await withServer { server, _ in
            let local = try SQLiteStore.temporary()
            let engine = SyncEngine.airports(
                store: local, client: APIClient(baseURL: server.baseURL, configuration: .patient), country: "NO")
            let airports = local.repository(Airport.self)
            try await engine.sync()
            let norway = bundledAirports.filter { $0.country == "NO" }.map(\.icao).sorted(by: icaoOrder)
            #expect(try await airports.fetchAll().map(\.icao) == norway)

            // ESSA moves to Norway (a whole row arrives), ENGM leaves (a deletion), EKCH is not ours.
            #expect(try await RawHTTP.patch(server, "ESSA", #"{"country": "NO"}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "ENGM", #"{"country": "SE"}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "EKCH", #"{"name": "Kastrup"}"#).status == 200)
            let next = try await engine.sync()
            #expect(next.pulledRows == 1 && next.pulledDeletions == 1)
            let arlanda = try #require(bundledAirports.first { $0.icao == "ESSA" })
            var moved = arlanda
            moved.country = "NO"
            #expect(try await airports.find("ESSA") == moved)
            #expect(try await airports.find("ENGM") == nil)
            #expect(try await airports.find("EKCH") == nil)
            #expect(try await airports.count() == norway.count)
        }
    }

    @Test(
        "an airport deleted through a push reaches other clients as a deletion, with and without a country",
        arguments: [nil, "NO"] as [String?])
    func deletionsReachOtherClients(country: String?) async throws {
        try await withServer { server, store in
            let local = try SQLiteStore.temporary()
            let reader = SyncEngine.airports(
                store: local, client: APIClient(baseURL: server.baseURL, configuration: .patient), country: country)
            try await reader.sync()
            #expect(try await local.repository(Airport.self).find("ENZV") != nil)
            // A renamed airport, then the same airport deleted by a writer: the rename must not bring it back.
            #expect(try await RawHTTP.patch(server, "ENZV", #"{"name": "Renamed"}"#).status == 200)
            let writer = SyncEngine.airports(
                store: try SQLiteStore.temporary(),
                client: APIClient(baseURL: server.baseURL, configuration: .writing), country: "NO")
            try await writer.sync()
            #expect(try await writer.store.repository(Airport.self).remove("ENZV"))
            #expect(try await writer.sync().pushed == 1)
            #expect(try await store.repository(Airport.self).find("ENZV") == nil)
            let next = try await reader.sync()
            #expect(next.pulledDeletions == 1)
            #expect(try await local.repository(Airport.self).find("ENZV") == nil)
        }
    }

    @Test("a new import on the server makes the next sync a full copy, removing airports the server dropped")
    func newEpoch() async throws {
        try await withServer { server, serverStore in
            let local = try SQLiteStore.temporary()
            let engine = SyncEngine.airports(
                store: local, client: APIClient(baseURL: server.baseURL, configuration: .patient))
            try await engine.sync()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("epoch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let csv = folder.appendingPathComponent("small.csv")
            let text = try String(contentsOf: try #require(AirportsCSV.bundledURL), encoding: .utf8)
            try text.split(separator: "\n").prefix(101).joined(separator: "\n").write(
                to: csv, atomically: true, encoding: .utf8)
            _ = try await AirportImporter.run(csv: csv, into: serverStore)

            let next = try await engine.sync()
            #expect(next.fullCopies == 1)
            #expect(next.pulledRows == 100)
            #expect(
                try await local.repository(Airport.self).fetchAll() == serverStore.repository(Airport.self).fetchAll())
        }
    }

    @Test("a feed page with a row that does not fit fails the pull naming the column; the pages before it stay")
    func badPageStopsThePull() async throws {
        let local = try SQLiteStore.temporary()
        let rows = bundledAirports.prefix(4).map {
            SyncProtocol.row(Airport.schema.values(of: $0), of: Airport.schema.table)
        }
        var broken = rows[3]
        broken["lat"] = .string("north")
        let stub = StubTransport()
        let client = APIClient(
            baseURL: try #require(URL(string: "http://airports.test")), transport: stub,
            configuration: .init(retryPolicy: .none))
        stub.stub(
            .get, "/sync/airports/feed",
            .json(SyncProtocol.FeedPage(rows: Array(rows.prefix(2)), deleted: [], cursor: "c1", more: true)),
            .json(SyncProtocol.FeedPage(rows: [rows[2], broken], deleted: [], cursor: "c2", more: false)))
        let engine = SyncEngine.airports(store: local, client: client)
        let error = await #expect(throws: DepotError.self) { try await engine.sync() }
        #expect(error?.column == "lat")
        #expect(try await local.repository(Airport.self).count() == 2)
    }
}
