import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import Foundation
import Testing

@Suite("Airports sync", .timeLimit(.minutes(10)))
struct AirportsSyncTests {
    @Test("the first sync copies every airport; the next carries a partial change and leaves the rest intact")
    func fullThenIncremental() async throws {
        try await withServer { server, serverStore in
            let client = APIClient(baseURL: server.baseURL)
            let local = try SQLiteStore.temporary()
            let first = try await AirportsSync.run(client: client, into: local, pageSize: 4_000)
            #expect(first.kind == .full)
            #expect(first.received == 28_298)
            #expect(first.requests == 1 + 8)  // /dataset, then 8 pages of 4,000
            #expect(
                try await local.repository(Airport.self).fetchAll()
                    == bundledAirports.sorted { icaoOrder($0.icao, $1.icao) })

            let idle = try await AirportsSync.run(client: client, into: local)
            #expect(idle.kind == .incremental)
            #expect(idle.received == 0)

            // Two changes to ENGM and one to ENZV, through a plain HTTP client.
            #expect(try await RawHTTP.patch(server, "ENGM", #"{"name": "Gardermoen"}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "ENGM", #"{"iata": null, "elevation": 700.25}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "ENZV", #"{"city": "Sola"}"#).status == 200)
            let next = try await AirportsSync.run(client: client, into: local)
            #expect(next.kind == .incremental)
            #expect(next.received == 3)
            #expect(next.revision == 3)
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
            let client = APIClient(baseURL: server.baseURL)
            let local = try SQLiteStore.temporary()
            let airports = local.repository(Airport.self)
            _ = try await AirportsSync.run(client: client, into: local, country: "NO")
            let norway = bundledAirports.filter { $0.country == "NO" }.map(\.icao).sorted(by: icaoOrder)
            #expect(try await airports.fetchAll().map(\.icao) == norway)

            // ESSA moves to Norway (the client lacks it: it fetches the whole record), ENGM leaves.
            #expect(try await RawHTTP.patch(server, "ESSA", #"{"country": "NO"}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "ENGM", #"{"country": "SE"}"#).status == 200)
            #expect(try await RawHTTP.patch(server, "EKCH", #"{"name": "Kastrup"}"#).status == 200)
            let next = try await AirportsSync.run(client: client, into: local, country: "NO")
            #expect(next.kind == .incremental)
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
        "an airport deleted through a push reaches /changes clients as a deletion, with and without a country",
        arguments: [nil, "NO"] as [String?])
    func deletionsReachChangesClients(country: String?) async throws {
        try await withServer { server, store in
            let client = APIClient(baseURL: server.baseURL)
            let local = try SQLiteStore.temporary()
            _ = try await AirportsSync.run(client: client, into: local, country: country)
            #expect(try await local.repository(Airport.self).find("ENZV") != nil)
            // A renamed airport, then the same airport deleted: the rename must not bring it back.
            #expect(try await RawHTTP.patch(server, "ENZV", #"{"name": "Renamed"}"#).status == 200)
            let current = try #require(try await store.repository(Airport.self).find("ENZV"))
            let base = String(decoding: try JSONEncoder().encode(AirportRecord(current)), as: UTF8.self)
            let delete = #"{"changes": {"icao": "ENZV"}, "base": \#(base), "edited_at": 1700000000, "delete": true}"#
            #expect(try await RawHTTP.push(server, "ENZV", key: "delete ENZV", delete).status == 200)
            #expect(try await store.repository(Airport.self).find("ENZV") == nil)
            let next = try await AirportsSync.run(client: client, into: local, country: country)
            #expect(next.kind == .incremental)
            #expect(next.removed == 1)
            #expect(try await local.repository(Airport.self).find("ENZV") == nil)
            let page = try await RawHTTP.get(server, "/changes?since=0" + (country.map { "&country=\($0)" } ?? ""))
            #expect(page.object["deleted"] as? [String] == ["ENZV"])
        }
    }

    @Test("a new import on the server makes the next sync full again, removing airports the server dropped")
    func newEpoch() async throws {
        try await withServer { server, serverStore in
            let client = APIClient(baseURL: server.baseURL)
            let local = try SQLiteStore.temporary()
            _ = try await AirportsSync.run(client: client, into: local)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("epoch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let csv = folder.appendingPathComponent("small.csv")
            let text = try String(contentsOf: try #require(AirportsCSV.bundledURL), encoding: .utf8)
            try text.split(separator: "\n").prefix(101).joined(separator: "\n").write(
                to: csv, atomically: true, encoding: .utf8)
            _ = try await AirportImporter.run(csv: csv, into: serverStore)

            let next = try await AirportsSync.run(client: client, into: local)
            #expect(next.kind == .full)
            #expect(next.received == 100)
            #expect(next.removed == 28_198)
            #expect(
                try await local.repository(Airport.self).fetchAll() == serverStore.repository(Airport.self).fetchAll())
        }
    }

    @Test("a sync that fails midway (a server error on page 2, a partial record) writes nothing")
    func failedSyncWritesNothing() async throws {
        let local = try SQLiteStore.temporary()
        let kept = try #require(bundledAirports.first)
        try await local.repository(Airport.self).insert(kept)
        let pages = bundledAirports.dropFirst().prefix(4).map { AirportRecord($0) }
        let stub = StubTransport()
        let client = APIClient(
            baseURL: try #require(URL(string: "http://airports.test")), transport: stub,
            configuration: .init(retryPolicy: .none))
        stub.stub(.get, "/dataset", .json(DatasetInfo(epoch: "e1", revision: 0, airports: 4)))

        stub.stub(.get, "/airports", .json(Array(pages.prefix(2))), .status(500))
        await #expect(throws: HTTPError.self) {
            _ = try await AirportsSync.run(client: client, into: local, pageSize: 2)
        }
        var partial = pages[3]
        partial.name = nil
        partial.$name = .absent
        stub.stub(
            .get, "/airports", .json(Array(pages.prefix(2))), .json([pages[2], partial]), .json([AirportRecord]()))
        let error = await #expect(throws: DepotError.self) {
            _ = try await AirportsSync.run(client: client, into: local, pageSize: 2)
        }
        #expect(error?.message == "airport '\(partial.icao)' lacks name")
        #expect(try await local.repository(Airport.self).fetchAll() == [kept])
        #expect(try await local.repository(SyncCursor.self).count() == 0)
    }
}
