import Depot
import DepotHTTP
import DepotPostgres
import DepotSQL
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Testing

@testable import AirportsExample

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

@Suite("Airports API", .timeLimit(.minutes(10)))
struct AirportsServerTests {
    @Test("GET /airports filters in the store and agrees with filtering the CSV rows")
    func listMatchesReference() async throws {
        try await withReadOnlyServer { server, _ in
            let answer = try await RawHTTP.get(server, "/airports?country=NO&min_elevation=1000&limit=10000")
            #expect(answer.status == 200)
            let expected = bundledAirports.filter { $0.country == "NO" && $0.elevation >= 1000 }
                .sorted { icaoOrder($0.icao, $1.icao) }.map(WireAirport.init)
            #expect(answer.objects.compactMap(WireAirport.init) == expected)
            #expect(answer.objects.count == expected.count)

            // q: name or city, case-insensitive substring; `+` is a space, %XX an escape.
            let search = try await RawHTTP.get(server, "/airports?q=S%C3%83O+roque&limit=50")
            let searched = referenceSearch("são roque")
            #expect(!searched.isEmpty)
            #expect(search.objects.compactMap { $0["icao"] as? String } == searched)
        }
    }

    @Test("GET /airports?near= orders by haversine distance, ties by icao, with distance_km")
    func nearMatchesReference() async throws {
        try await withReadOnlyServer { server, _ in
            for (latitude, longitude) in [(59.9139, 10.7522), (-33.86, 151.21), (0.0, 0.0)] {
                let answer = try await RawHTTP.get(server, "/airports?near=\(latitude),\(longitude)&limit=10")
                let reference = referenceNearest(latitude, longitude, limit: 10)
                #expect(answer.objects.compactMap { $0["icao"] as? String } == reference.map(\.icao))
                for (object, expected) in zip(answer.objects, reference) {
                    let distance = (object["distance_km"] as? NSNumber)?.doubleValue ?? -1
                    #expect(abs(distance - expected.kilometers) < 1e-6)
                }
            }
        }
    }

    @Test("after= pages through every airport in icao order, each exactly once")
    func pagingCoversEverything() async throws {
        try await withReadOnlyServer { server, _ in
            var seen: [String] = []
            var after = ""
            while true {
                let page = try await RawHTTP.get(
                    server, "/airports?limit=7000" + (after.isEmpty ? "" : "&after=\(after)"))
                #expect(page.status == 200)
                let icaos = page.objects.compactMap { $0["icao"] as? String }
                seen += icaos
                guard icaos.count == 7000, let last = icaos.last else { break }
                after = last
            }
            #expect(seen == bundledAirports.map(\.icao).sorted(by: icaoOrder))
        }
    }

    @Test(
        "a bad parameter answers 400 with a JSON error naming it",
        arguments: [
            ("/airports?near=north", "near must be LAT,LON"),
            ("/airports?near=91,10", "near must be LAT,LON"),
            ("/airports?limit=0", "limit must be a whole number from 1 to 10000, got '0'"),
            ("/airports?limit=ten", "limit must be a whole number from 1 to 10000, got 'ten'"),
            ("/airports?limit=10001", "limit must be a whole number"),
            ("/airports?min_elevation=high", "min_elevation must be a number of feet, got 'high'"),
            ("/airports?contry=NO", "unknown parameter 'contry'"),
            ("/airports?country=", "country is empty"),
            ("/airports?country=NO&country=SE", "parameter 'country' is given twice"),
            ("/airports?near=1,1&after=ENGM", "after pages results in icao order"),
            ("/sync/airports/feed?limit=0", "limit must be 1 to 10000, not 0"),
            ("/sync/airports/feed?cursor=elsewhere", "cursor 'elsewhere' is not one this server gave"),
            ("/sync/airports/feed?since=1", "unknown query parameter 'since'"),
        ])
    func badParameter(path: String, message: String) async throws {
        try await withReadOnlyServer { server, _ in
            let answer = try await RawHTTP.get(server, path)
            #expect(answer.status == 400)
            #expect(answer.error?.contains(message) == true, "\(answer.error ?? "no error member")")
        }
    }

    @Test("GET /airports/{icao} answers the whole airport, and 404 with a message for an unknown one")
    func singleAirport() async throws {
        try await withReadOnlyServer { server, _ in
            let found = try await RawHTTP.get(server, "/airports/ENGM")
            #expect(found.status == 200)
            let engm = try #require(bundledAirports.first { $0.icao == "ENGM" })
            #expect(WireAirport(found.object) == WireAirport(engm))
            #expect(found.object.keys.sorted() == AirportRecord.memberNames.sorted())
            let missing = try await RawHTTP.get(server, "/airports/XXXX")
            #expect(missing.status == 404)
            #expect(missing.error == "no airport with icao 'XXXX'")
        }
    }

    @Test("PATCH changes only the members it carries; null clears an optional one")
    func patchIsPartial() async throws {
        try await withServer { server, store in
            let before = try #require(try await store.repository(Airport.self).find("ENGM"))
            let answer = try await RawHTTP.patch(server, "ENGM", #"{"name": "Gardermoen", "iata": null}"#)
            #expect(answer.status == 200)
            var expected = before
            expected.name = "Gardermoen"
            expected.iata = nil
            #expect(try await store.repository(Airport.self).find("ENGM") == expected)
            #expect(WireAirport(answer.object) == WireAirport(expected))
            #expect(answer.object["iata"] is NSNull)

            // The sync log holds the change: a client that had everything before it receives the row.
            let epoch = try #require(try await RawHTTP.get(server, "/dataset").object["epoch"] as? String)
            let changes = try await RawHTTP.get(server, "/sync/airports/feed?cursor=log:\(epoch):0")
            let rows = try #require(changes.object["rows"] as? [[String: Any]])
            #expect(rows.count == 1 && WireAirport(rows[0]) == WireAirport(expected))
            #expect(rows.first?["iata"] is NSNull)
            #expect((try await RawHTTP.get(server, "/dataset")).object["revision"] as? Int == 1)

            // An empty body changes nothing and records nothing.
            #expect(try await RawHTTP.patch(server, "ENGM", "{}").status == 200)
            #expect((try await RawHTTP.get(server, "/dataset")).object["revision"] as? Int == 1)
        }
    }

    @Test(
        "a bad PATCH answers 400 naming what was wrong and changes nothing",
        arguments: [
            (#"{"nmae": "x"}"#, "unknown member 'nmae'"),
            (#"{"name": null}"#, "'name' cannot be null"),
            (#"{"elevation": "high"}"#, "'elevation' must be a number"),
            (#"{"city": 12}"#, "'city' must be a string"),
            (#"{"lat": 91}"#, "'lat' must be within -90…90, got 91.0"),
            (#"{"name": "  "}"#, "'name' cannot be empty"),
            (#"{"icao": "ENZV", "name": "x"}"#, "icao cannot change"),
            (#"[{"name": "x"}]"#, "the body must be a JSON object"),
            (#"{"name": "x""#, "the body is not valid JSON"),
            (#"{"distance_km": 3}"#, "unknown member 'distance_km'"),
            (#"{"name": "Oslo\u0000Gardermoen"}"#, "'name' cannot contain NUL (U+0000)"),
            (#"{"city": "\u0000"}"#, "'city' cannot contain NUL (U+0000)"),
            (
                "{\"name\": \"" + String(repeating: "x", count: 201) + "\"}",
                "'name' is 201 Unicode scalars long; at most 200"
            ),
            (
                // One character, 50 KB: the limit counts what storage pays for.
                "{\"name\": \"e" + String(repeating: "\u{301}", count: 25_000) + "\"}",
                "'name' is 25001 Unicode scalars long; at most 200"
            ),
        ])
    func badPatch(body: String, message: String) async throws {
        try await withReadOnlyServer { server, store in
            let before = try await store.repository(Airport.self).find("ENGM")
            let answer = try await RawHTTP.patch(server, "ENGM", body)
            #expect(answer.status == 400)
            #expect(answer.error?.contains(message) == true, "\(answer.error ?? "no error member")")
            #expect(try await store.repository(Airport.self).find("ENGM") == before)
            #expect(try await RawHTTP.get(server, "/dataset").object["revision"] as? Int == 0)
        }
    }

    @Test("a failure the client did not cause answers 500 with an incident number, never the error's text")
    func internalErrorsStayInside() async throws {
        try await withServer { server, store in
            // A value the entity cannot decode, written underneath Depot.
            try await store.migrate(
                Migrations([
                    Migration(
                        "corrupt ENGM",
                        [
                            .sql(sqlite: "UPDATE airports SET elevation = 'abc' WHERE icao = 'ENGM'")
                        ])
                ]))
            let answer = try await RawHTTP.get(server, "/airports/ENGM")
            #expect(answer.status == 500)
            let message = try #require(answer.error)
            #expect(message.hasPrefix("the server could not answer this request (incident "), "\(message)")
            for secret in ["abc", "elevation", "sqlite", store.path, "DepotError"] {
                #expect(!message.contains(secret), "\(message) tells '\(secret)'")
            }
        }
    }

    @Test("a country in the sync path that is not percent-encoded text answers 400 naming it, not a scope of garbage")
    func badCountryPath() async throws {
        try await withReadOnlyServer { server, _ in
            let answer = try await RawHTTP.get(server, "/sync/country/%E0%A4/airports/feed")
            #expect(answer.status == 400)
            #expect(answer.error?.contains("country") == true, "\(answer.error ?? "no error member")")
        }
    }

    @Test("PATCH of an unknown icao answers 404 and creates nothing")
    func patchUnknown() async throws {
        try await withReadOnlyServer { server, store in
            let answer = try await RawHTTP.patch(server, "ZZZZ", #"{"name": "Nowhere"}"#)
            #expect(answer.status == 404)
            #expect(answer.error == "no airport with icao 'ZZZZ'")
            #expect(try await store.repository(Airport.self).find("ZZZZ") == nil)
            #expect(try await RawHTTP.get(server, "/dataset").object["revision"] as? Int == 0)
        }
    }

    @Test("a query parameter or path holding NUL answers 400 naming it, not 500")
    func nulInTheAddress() async throws {
        try await withReadOnlyServer { server, _ in
            let query = try await RawHTTP.get(server, "/airports?q=a%00b")
            #expect(query.status == 400)
            #expect(query.error?.contains("q cannot contain NUL") == true, "\(query.error ?? "")")
            let path = try await RawHTTP.get(server, "/airports/EN%00GM")
            #expect(path.status == 400)
        }
    }

    @Test("a taken port makes start() throw .connection naming the address, instead of waiting forever")
    func portTaken() async throws {
        try await withReadOnlyServer { server, store in
            let error = await #expect(throws: DepotError.self) {
                _ = try await AirportsServer.start(store: store, port: server.port)
            }
            #expect(error?.kind == .connection)
            #expect(error?.message.contains("127.0.0.1:\(server.port)") == true, "\(error?.message ?? "")")
        }
    }

    @Test("GET /health answers 200 while the store reads, and 503 with an incident number when it cannot")
    func health() async throws {
        try await withReadOnlyServer { server, _ in
            let healthy = try await RawHTTP.get(server, "/health")
            #expect(healthy.status == 200)
            #expect(healthy.object["status"] as? String == "ok")
        }
        // A store whose server refuses connections (nothing listens on port 1).
        var configuration = try PostgresStore.Configuration(url: "postgres://depot@127.0.0.1:1/depot")
        configuration.connectTimeout = .seconds(60)
        let unreachable = PostgresStore(configuration: configuration)
        try await withCleanup {
            let (status, body) = await AirportsController.health(of: unreachable)
            #expect(status == .serviceUnavailable)
            #expect(body["status"] == "unavailable")
            #expect(body["error"]?.hasPrefix("the store did not answer (incident ") == true, "\(body)")
        } cleanup: {
            await unreachable.close()
        }
    }

    @Test(
        "a limit that is not positive makes start() throw .invalidQuery naming it, before anything listens",
        arguments: ["idleTimeout", "maximumConnections", "maximumTextLength", "changeLogLength"])
    func limitsMustBePositive(limit: String) async throws {
        var limits = AirportsServer.Limits()
        switch limit {
        case "idleTimeout": limits.idleTimeout = .zero
        case "maximumConnections": limits.maximumConnections = 0
        case "maximumTextLength": limits.maximumTextLength = -1
        default: limits.changeLogLength = 0
        }
        let error = await #expect(throws: DepotError.self) {
            _ = try await AirportsServer.start(store: InMemoryStore(), limits: limits)
        }
        #expect(error?.kind == .invalidQuery)
        #expect(error?.message == "AirportsServer.Limits.\(limit) must be positive", "\(error?.message ?? "")")
    }

    @Test("the change log keeps the newest changes; a client further behind copies in full, and then goes on")
    func changeLogIsBounded() async throws {
        let store = try SQLiteStore.temporary()
        _ = try await AirportImporter.run(csv: try #require(AirportsCSV.bundledURL), into: store)
        var limits = AirportsServer.Limits()
        limits.changeLogLength = 3
        let server = try await AirportsServer.start(store: store, limits: limits, access: .testing)
        try await withCleanup {
            let mirror = try SQLiteStore.temporary()
            let engine = SyncEngine.airports(
                store: mirror, client: APIClient(baseURL: server.baseURL, configuration: .patient))
            #expect(try await engine.sync().pulledRows == 28_298)
            for call in 1...5 {
                #expect(try await RawHTTP.patch(server, "ENGM", #"{"name": "Renamed \#(call)"}"#).status == 200)
            }
            let log = try await store.sql("SELECT sequence FROM depot_sync_log ORDER BY sequence")
            #expect(log.rows.map(\.first) == [.integer(3), .integer(4), .integer(5)])
            // The mirror synced at 0: the changes after it are gone, so it copies in full.
            let again = try await engine.sync()
            #expect(again.fullCopies == 1)
            #expect(try await mirror.repository(Airport.self).find("ENGM")?.name == "Renamed 5")
            let next = try await engine.sync()
            #expect(next.fullCopies == 0 && next.requests == 1)
        } cleanup: {
            await server.stop()
        }
    }

    @Test("an idle connection is closed after the idle timeout; beyond the connection limit, new ones wait")
    func idleTimeoutAndConnectionLimit() async throws {
        let (_, store) = try await SharedServer.get()
        var limits = AirportsServer.Limits()
        limits.idleTimeout = .seconds(1)
        limits.maximumConnections = 1
        let server = try await AirportsServer.start(store: store, limits: limits, access: .testing)
        try await withCleanup {
            // One idle connection takes the only place; a request waits behind it until the
            // server closes it for idling, then is answered.
            let idle = try IdleSocket(port: server.port)
            defer { idle.close() }
            let answer = try await RawHTTP.get(server, "/dataset")
            #expect(answer.status == 200)
            #expect(try await offPool { idle.waitUntilClosedByPeer() })
        } cleanup: {
            await server.stop()
        }
    }
}

/// A TCP connection to 127.0.0.1 that sends nothing: what a slow or idle client holds.
final class IdleSocket: Sendable {
    let descriptor: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
            let kind = Int32(SOCK_STREAM.rawValue)
        #else
            let kind = SOCK_STREAM
        #endif
        descriptor = socket(AF_INET, kind, 0)
        guard descriptor >= 0 else { throw DepotError(.connection, "could not open a socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close()
            throw DepotError(.connection, "could not connect to 127.0.0.1:\(port)")
        }
    }

    /// Blocks until the server closes the connection (a read returns 0 or fails), for at most
    /// 90 s (an outer bound); true when it did.
    func waitUntilClosedByPeer() -> Bool {
        var timeout = timeval(tv_sec: 90, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, 0)
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    func close() {
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
    }
}
