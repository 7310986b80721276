import AirportsExample
import Depot
import DepotHTTP
import DepotPostgres
import DepotSQLite
import DepotTesting
import Foundation
import Testing

@Suite(
    "Airports on PostgreSQL", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(3)))
struct AirportsPostgresTests {
    /// A PostgreSQL URL on a scratch schema, and a store on it; the schema is dropped afterwards.
    func withPostgres(_ body: (String, PostgresStore) async throws -> Void) async throws {
        let base = try PostgresEnvironment.requireURL()
        let url = base + (base.contains("?") ? "&" : "?") + "schema=" + PostgresEnvironment.scratchSchemaName()
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

            let found = try await AirportQuery(search: "ÅLESUND", limit: 50).run(on: airports).map(\.airport.icao)
            let expected = bundledAirports.filter {
                $0.name.lowercased().contains("ålesund") || ($0.city ?? "").lowercased().contains("ålesund")
            }.map(\.icao).sorted(by: icaoOrder)
            #expect(found == expected)

            let oslo = (59.9139, 10.7522)
            let nearest = try await AirportQuery(near: Coordinate(latitude: oslo.0, longitude: oslo.1), limit: 10)
                .run(on: airports)
            let reference = bundledAirports.map {
                ($0.icao, referenceKilometers(oslo.0, oslo.1, $0.latitude, $0.longitude))
            }
            .sorted { $0.1 != $1.1 ? $0.1 < $1.1 : icaoOrder($0.0, $1.0) }.prefix(10)
            #expect(nearest.map(\.airport.icao) == reference.map(\.0))

            let server = try await AirportsServer.start(store: store)
            try await withCleanup {
                let local = try SQLiteStore.temporary()
                let client = APIClient(baseURL: server.baseURL)
                _ = try await AirportsSync.run(client: client, into: local, country: "NO")
                #expect(try await RawHTTP.patch(server, "ENGM", #"{"name": "Gardermoen", "lid": "GEN"}"#).status == 200)
                let next = try await AirportsSync.run(client: client, into: local, country: "NO")
                #expect(next.received == 1)
                #expect(try await local.repository(Airport.self).fetchAll() == airports.fetch(where: \.country == "NO"))
                #expect(try await local.repository(Airport.self).find("ENGM")?.localCode == "GEN")
            } cleanup: {
                await server.stop()
            }
        }
    }

    @Test("the airports executable imports into and queries PostgreSQL with --postgres")
    func commandLine() async throws {
        let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("airports") }
        let binary = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) })
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

/// Runs `binary` to completion: exit status, standard output and standard error. The blocking
/// waits happen on a thread of their own, never on the cooperative pool (two blocked pool threads
/// on a 2-core machine stall every other test in the process).
func runProcess(_ binary: URL, _ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
    try await offPool {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self)
        )
    }
}

/// Runs blocking `work` on a new thread and returns its result.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
