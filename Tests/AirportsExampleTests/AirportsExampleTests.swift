import AirportsExample
import Depot
import DepotSQLite
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// The shared store holding the bundled airports (read-only: the tests here change nothing).
func importedStore() async throws -> SQLiteStore {
    try await SharedServer.get().1
}

@Suite("Airports example", .timeLimit(.minutes(10)))
struct AirportsExampleTests {
    @Test("the bundled CSV parses into 28,298 airports with the documented quirks")
    func bundledCSV() {
        #expect(bundledAirports.count == 28_298)
        #expect(bundledAirports.filter { $0.iata == nil }.count == 20_414)
        #expect(bundledAirports.filter { $0.elevation != $0.elevation.rounded() }.count == 3_117)
        #expect(bundledAirports.contains { $0.city == "Ålesund" })
    }

    @Test("nearest airports match a straightforward haversine over the CSV rows, ties by icao")
    func nearestMatchesReference() async throws {
        let store = try await importedStore()
        for (latitude, longitude) in [(59.9139, 10.7522), (-33.86, 151.21), (64.1, -21.9), (0, 0)] {
            let results = try await AirportQuery(near: Coordinate(latitude: latitude, longitude: longitude), limit: 10)
                .run(on: store.repository(Airport.self))
            let reference = referenceNearest(latitude, longitude, limit: 10)
            #expect(results.map(\.airport.icao) == reference.map(\.icao))
            for (result, expected) in zip(results, reference) {
                #expect(abs((result.distanceKilometers ?? -1) - expected.kilometers) < 1e-6)
            }
        }
    }

    @Test("filters run in the store and agree with filtering the CSV rows")
    func filtersMatchReference() async throws {
        let store = try await importedStore()
        let airports = store.repository(Airport.self)
        let query = AirportQuery(country: "NO", minimumElevation: 1000, limit: 1000)
        let expected = bundledAirports.filter { $0.country == "NO" && $0.elevation >= 1000 }.map(\.icao)
            .sorted(by: icaoOrder)
        #expect(try await query.run(on: airports).map(\.airport.icao) == expected)
        #expect(try await airports.count(where: \.iata != nil) == 7_884)
        let found = try await AirportQuery(contains: "ÅLESUND", limit: 50).run(on: airports).map(\.airport.icao)
        let expectedFound = referenceSearch("ålesund")
        #expect(!expectedFound.isEmpty)
        #expect(found == expectedFound)
    }

    @Test(
        "a malformed CSV line is named by file and line, and nothing is imported",
        arguments: [
            ("\"00AA\",\"\",\"A\",\"B\",\"C\",\"US\",3435,38.7,-101.4,\"tz\"", "expected 11 fields, found 10"),
            ("\"00AA\",\"\",\"A\",\"B\",\"C\",\"US\",high,38.7,-101.4,\"tz\",\"\"", "elevation 'high' is not a number"),
            ("\"00AA\",\"\",\"A,\"B\",\"C\",\"US\",1,38.7,-101.4,\"tz\",\"\"", "text after a closing quote"),
            ("\"00AA\",\"\",\"A\",\"B\",\"C\",\"US\",1,98.7,-101.4,\"tz\",\"\"", "lat/lon 98.7,-101.4 is out of range"),
            ("\"00AA\",\"\",\"  \",\"B\",\"C\",\"US\",1,38.7,-101.4,\"tz\",\"\"", "name is empty"),
        ])
    func malformedLine(line: String, reason: String) async throws {
        let header =
            "\"icao\",\"iata\",\"name\",\"city\",\"subd\",\"country\",\"elevation\",\"lat\",\"lon\",\"tz\",\"lid\""
        let good = "\"00AB\",\"\",\"Good\",\"\",\"\",\"US\",1,1,1,\"\",\"\""
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("bad.csv")
        try [header, good, line, good].joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let store = try SQLiteStore.temporary()
        let error = await #expect(throws: AirportsCSV.Problem.self) {
            _ = try await AirportImporter.run(csv: file, into: store)
        }
        #expect(error?.description == "bad.csv:3: \(reason)")
        #expect(try await store.repository(Airport.self).count() == 0)
    }

    @Test("a file that starts with a UTF-8 byte-order mark parses like one without")
    func byteOrderMark() throws {
        let header =
            "\"icao\",\"iata\",\"name\",\"city\",\"subd\",\"country\",\"elevation\",\"lat\",\"lon\",\"tz\",\"lid\""
        let row = "\"00AB\",\"\",\"Good\",\"\",\"\",\"US\",1,1,1,\"\",\"\""
        let airports = try AirportsCSV.parse("\u{FEFF}" + header + "\n" + row, file: "bom.csv")
        #expect(airports.map(\.icao) == ["00AB"])
    }

    @Test("the demo runs end to end: two clients edit offline, meet a conflict and converge; a partial update arrives")
    func demoRuns() async throws {
        let lines = LineCollector()
        try await AirportsDemo.run(say: { lines.append($0) })
        let output = lines.all
        #expect(output.contains { $0.hasPrefix("✓ server: imported 28298 airports") })
        #expect(output.contains { $0.hasPrefix("✓ client: first sync, 28298 airports") })
        #expect(output.contains { $0.hasPrefix("✓ other client: sync met 1 conflict on name") })
        #expect(
            output.contains { $0.hasPrefix("✓ converged: server and both clients hold the same 28298 airports: true") })
        #expect(output.contains { $0.hasPrefix("✓ client: sync, 1 change in 1 request") })
        #expect(output.contains { $0.contains("every other field intact: true") })
        #expect(
            output.contains {
                $0.hasPrefix("✓ client: GET /airports/ENBR through a resource, stored and mapped: Bergen")
                    && $0.contains("(BGO), Bergen, NO, 52 m")
            })
        #expect(
            output.contains { $0.hasPrefix(#"✓ client: GET /airports/ZZZZ → 404, the API's error body: "no airport"#) })
        #expect(output.last == "Done.")
    }

    @Test("the airports executable imports and answers --json queries, as a subprocess")
    func commandLine() async throws {
        let binary = try airportsBinary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let storePath = folder.appendingPathComponent("a.sqlite").path
        let imported = try await runProcess(binary, ["import", "--store", storePath])
        #expect(imported.status == 0)
        #expect(imported.output.contains("imported 28298 airports"))
        let queried = try await runProcess(
            binary, ["query", "--store", storePath, "--near", "60.19,11.10", "--limit", "3", "--json"])
        #expect(queried.status == 0)
        let rows = try JSONSerialization.jsonObject(with: Data(queried.output.utf8)) as? [[String: Any]] ?? []
        #expect(rows.compactMap { $0["icao"] as? String }.first == "ENGM")
        #expect(rows.allSatisfy { $0["distance_km"] is Double && $0["lat"] is Double })
        let bad = try await runProcess(binary, ["query", "--store", storePath, "--near", "north"])
        #expect(bad.status != 0)
        #expect(bad.errors.contains("--near takes LAT,LON"))
        let missing = try await runProcess(
            binary, ["query", "--store", folder.appendingPathComponent("none.sqlite").path])
        #expect(missing.status != 0)
        #expect(missing.errors.contains("no store at"))

        // serve (its own process) → sync into a second store → query the client store.
        let (server, _, line) = try await startServe(["--store", storePath, "--port", "0"])
        let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }, "\(line)")
        #expect(line.hasPrefix("serving 28298 airports from \(storePath)"))
        let clientPath = folder.appendingPathComponent("client.sqlite").path
        let synced = try await runProcess(
            binary, ["sync", "--from", String(url), "--store", clientPath, "--country", "NO"])
        #expect(synced.status == 0, "\(synced.errors)")
        #expect(synced.output.hasPrefix("synced with \(url): pushed 0 edits, pulled 84 airports in 2 requests"))
        let again = try await runProcess(
            binary, ["sync", "--from", String(url), "--store", clientPath, "--country", "NO"])
        #expect(again.output.hasPrefix("synced with \(url): pushed 0 edits, pulled 0 airports in 1 request,"))
        server.terminate()
        try await offPool { server.waitUntilExit() }
        #expect(server.terminationStatus == 0)
        let local = try await runProcess(binary, ["query", "--store", clientPath, "--json", "--limit", "1000"])
        let localRows = try JSONSerialization.jsonObject(with: Data(local.output.utf8)) as? [[String: Any]] ?? []
        #expect(
            localRows.compactMap { $0["icao"] as? String }
                == bundledAirports.filter { $0.country == "NO" }.map(\.icao).sorted(by: icaoOrder))
        let unreachable = try await runProcess(binary, ["sync", "--from", String(url), "--store", clientPath])
        #expect(unreachable.status != 0)
        #expect(unreachable.errors.contains("GET /sync/airports/feed"))
    }

    @Test("airports edit works offline, shows as pending in query --json, and airports sync pushes it")
    func offlineEditCommandLine() async throws {
        let binary = try airportsBinary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let serverPath = folder.appendingPathComponent("server.sqlite").path
        #expect(try await runProcess(binary, ["import", "--store", serverPath, "--quiet"]).status == 0)
        let (server, _, line) = try await startServe(
            ["--store", serverPath, "--port", "0", "--write-token", testWriteToken])
        let url = String(
            try #require(line.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }, "\(line)"))
        let clientPath = folder.appendingPathComponent("client.sqlite").path
        let first = try await runProcess(
            binary, ["sync", "--from", url, "--store", clientPath, "--token", testWriteToken])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.hasPrefix("synced with \(url): pushed 0 edits, pulled 28298 airports"), "\(first.output)")

        let edited = try await runProcess(
            binary, ["edit", "--store", clientPath, "ENGM", "--name", "Oslo lufthavn", "--iata", "null"])
        #expect(edited.status == 0, "\(edited.errors)")
        #expect(edited.output.contains("1 edit(s) waiting"))
        func engm() async throws -> [String: Any]? {
            let queried = try await runProcess(
                binary, ["query", "--store", clientPath, "--near", "60.19,11.10", "--limit", "1", "--json"])
            let rows = try JSONSerialization.jsonObject(with: Data(queried.output.utf8)) as? [[String: Any]]
            return rows?.first
        }
        let pending = try #require(try await engm())
        #expect(pending["name"] as? String == "Oslo lufthavn")
        #expect(pending["iata"] is NSNull)
        #expect(pending["pending"] as? Bool == true)
        let unknown = try await runProcess(binary, ["edit", "--store", clientPath, "XXXX", "--name", "Nowhere"])
        #expect(unknown.status == 1)
        #expect(unknown.errors.contains("no airport with icao 'XXXX'"))

        let pushed = try await runProcess(
            binary, ["sync", "--from", url, "--store", clientPath, "--token", testWriteToken])
        #expect(pushed.output.hasPrefix("synced with \(url): pushed 1 edit"), "\(pushed.output)")
        let synced = try #require(try await engm())
        #expect(synced["pending"] == nil)
        #expect(synced["name"] as? String == "Oslo lufthavn")
        server.terminate()
        try await offPool { server.waitUntilExit() }
        let onServer = try await SQLiteStore(path: serverPath).repository(Airport.self).find("ENGM")
        #expect(onServer?.name == "Oslo lufthavn")
        #expect(onServer?.iata == nil)
    }
}

/// Collects demo output lines from a `@Sendable` closure.
final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite("Airports example: search", .timeLimit(.minutes(5)))
struct AirportsSearchTests {
    @Test("query --search finds names or cities by word prefixes through the search index of migration 4")
    func searchThroughTheIndex() async throws {
        let store = try SQLiteStore.temporary()
        let airports = store.repository(Airport.self)
        let sample = bundledAirports.filter { ["NO", "BR", "PT"].contains($0.country) }
        try await airports.insert(sample)
        let refused = await #expect(throws: DepotError.self) {
            try await AirportQuery(search: "são", limit: 10).run(on: airports)
        }
        #expect(refused?.message.contains("airports migrate") == true)
        _ = try await AirportsMigrations.run(on: store)
        let stored = try await airports.fetchAll()
        for query in ["são", "SAO PAU", "osl gard", "inter", "ålesund"] {
            let tokens = TextSearch.tokens(of: query, .caseInsensitive)
            let expected = stored.filter {
                TextSearch.matches($0.name, tokens: tokens, .caseInsensitive)
                    || TextSearch.matches($0.city, tokens: tokens, .caseInsensitive)
            }.map(\.icao).sorted(by: icaoOrder)
            let found = try await AirportQuery(search: query, limit: 10_000).run(on: airports).map(\.airport.icao)
            #expect(found == expected, "\(query)")
            #expect(!expected.isEmpty, "\(query) finds something in Norway, Brazil or Portugal")
        }
        #expect(try await AirportQuery(search: "osl gard", limit: 5).run(on: airports).map(\.airport.icao) == ["ENGM"])
    }
}
