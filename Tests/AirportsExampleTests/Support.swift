import AirportsExample
import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A fresh SQLite store with the bundled airports imported, served on an ephemeral port.
func servedImport(limits: AirportsServer.Limits = .init()) async throws -> (AirportsServer, SQLiteStore) {
    let store = try SQLiteStore.temporary()
    _ = try await AirportImporter.run(csv: try #require(AirportsCSV.bundledURL), into: store)
    return (
        try await AirportsServer.start(
            store: store, limits: limits, access: AirportsServer.Access(writeTokens: [testWriteToken])), store
    )
}

/// A server of its own for a test that changes data; stopped after `body`.
func withServer(
    limits: AirportsServer.Limits = .init(), _ body: (AirportsServer, SQLiteStore) async throws -> Void
) async throws {
    let (server, store) = try await servedImport(limits: limits)
    try await withCleanup {
        try await body(server, store)
    } cleanup: {
        await server.stop()
    }
}

/// One server over the bundled airports for the tests that change nothing (or must not): one
/// import for all of them instead of one each (28,298 rows in a debug build keep a core busy).
enum SharedServer {
    private static let starting = Task { try await servedImport() }

    static func get() async throws -> (AirportsServer, SQLiteStore) { try await starting.value }
}

/// Runs `body` against the shared read-only server.
func withReadOnlyServer(_ body: (AirportsServer, SQLiteStore) async throws -> Void) async throws {
    let (server, store) = try await SharedServer.get()
    try await body(server, store)
}

/// Plain HTTP through URLSession, independent of DepotHTTP: what any client of the API sees.
enum RawHTTP {
    struct Answer {
        var status: Int
        var body: Data
        /// The body as JSON (`nil` when it is not JSON).
        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
        /// The `error` member of a JSON error body.
        var error: String? { (json as? [String: Any])?["error"] as? String }
        var objects: [[String: Any]] { json as? [[String: Any]] ?? [] }
        var object: [String: Any] { json as? [String: Any] ?? [:] }
    }

    static func send(
        _ method: String, _ url: URL, body: String? = nil,
        headers: [String: String] = ["Authorization": "Bearer \(testWriteToken)"]
    ) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        // An outer bound, not a speed: 24 PATCHes that take turns on one lock answered the last one
        // after more than URLSession's default 60 s in a CI run beside other suites.
        request.timeoutInterval = 600
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        // A session of its own, so a fresh connection: a kept-alive one may have been closed by
        // the server's idle timeout while a long step (an import under load) ran.
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }

    static func get(_ server: AirportsServer, _ pathAndQuery: String) async throws -> Answer {
        try await send("GET", try #require(URL(string: server.baseURL.absoluteString + pathAndQuery)))
    }

    /// `POST /sync/airports/push` with `key` as its Idempotency-Key, as a writer.
    static func push(_ server: AirportsServer, key: String, _ body: String) async throws -> Answer {
        try await send(
            "POST", try #require(URL(string: server.baseURL.absoluteString + "/sync/airports/push")), body: body,
            headers: ["Idempotency-Key": key, "Authorization": "Bearer \(testWriteToken)"])
    }

    static func patch(_ server: AirportsServer, _ icao: String, _ body: String) async throws -> Answer {
        try await send(
            "PATCH", try #require(URL(string: server.baseURL.absoluteString + "/airports/" + icao)), body: body)
    }
}

/// The fields of a JSON airport, as the reference computations compare them.
struct WireAirport: Equatable {
    var icao, name, country: String
    var iata, city, subdivision, timeZone, localCode: String?
    var elevation, latitude, longitude: Double

    init(_ airport: Airport) {
        icao = airport.icao
        name = airport.name
        country = airport.country
        iata = airport.iata
        city = airport.city
        subdivision = airport.subdivision
        timeZone = airport.timeZone
        localCode = airport.localCode
        elevation = airport.elevation
        latitude = airport.latitude
        longitude = airport.longitude
    }

    init?(_ object: [String: Any]) {
        guard let icao = object["icao"] as? String, let name = object["name"] as? String,
            let country = object["country"] as? String, let elevation = (object["elevation"] as? NSNumber)?.doubleValue,
            let latitude = (object["lat"] as? NSNumber)?.doubleValue,
            let longitude = (object["lon"] as? NSNumber)?.doubleValue
        else { return nil }
        self.icao = icao
        self.name = name
        self.country = country
        iata = object["iata"] as? String
        city = object["city"] as? String
        subdivision = object["subd"] as? String
        timeZone = object["tz"] as? String
        localCode = object["lid"] as? String
        self.elevation = elevation
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Byte-wise icao order, as the stores sort primary keys.
func icaoOrder(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.lexicographicallyPrecedes(rhs.utf8) }

// MARK: - Answers computed from the CSV rows, independently of Depot

/// The bundled rows, parsed once.
let bundledAirports: [Airport] = {
    guard let url = AirportsCSV.bundledURL, let text = try? String(contentsOf: url, encoding: .utf8),
        let rows = try? AirportsCSV.parse(text, file: "airports.csv")
    else { return [] }
    return rows
}()

/// Haversine written out here, independently of Depot's `GeoDistance`.
func referenceKilometers(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    let toRadians = Double.pi / 180
    let phi1 = lat1 * toRadians
    let phi2 = lat2 * toRadians
    let a =
        pow(sin((phi2 - phi1) / 2), 2) + cos(phi1) * cos(phi2) * pow(sin((lon2 - lon1) * toRadians / 2), 2)
    return 2 * 6371.0088 * atan2(sqrt(a), sqrt(1 - a))
}

/// The `limit` airports nearest to a point by ``referenceKilometers``, ties by icao.
func referenceNearest(_ latitude: Double, _ longitude: Double, limit: Int) -> [(icao: String, kilometers: Double)] {
    let all = bundledAirports.map {
        (icao: $0.icao, kilometers: referenceKilometers(latitude, longitude, $0.latitude, $0.longitude))
    }
    return Array(
        all.sorted { $0.kilometers != $1.kilometers ? $0.kilometers < $1.kilometers : icaoOrder($0.icao, $1.icao) }
            .prefix(limit))
}

/// The icaos of the airports whose name or city contains `needle` (lowercase), in icao order.
func referenceSearch(_ needle: String) -> [String] {
    bundledAirports.filter { $0.name.lowercased().contains(needle) || ($0.city ?? "").lowercased().contains(needle) }
        .map(\.icao).sorted(by: icaoOrder)
}

// MARK: - The executable

/// The `airports` executable built next to the test bundle.
func airportsBinary() throws -> URL {
    let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent("airports") }
    return try #require(
        candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
        "build the airports product first (swift build --build-tests)")
}

/// Runs `binary` to completion: exit status, standard output and standard error. The blocking
/// waits happen on a thread of their own, never on the cooperative pool (two blocked pool threads
/// on a 2-core machine stall every other test in the process).
func runProcess(_ binary: URL, _ arguments: [String], environment: [String: String] = [:]) async throws -> (
    status: Int32, output: String, errors: String
) {
    try await offPool {
        let process = try ChildProcess.run(
            binary, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        // Standard error is read on a thread of its own: a child that fills one pipe while this
        // reads the other would otherwise wait forever.
        let errors = ErrorsReader(process.errors)
        let output = process.output?.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: output, as: UTF8.self),
            String(decoding: errors.finish(), as: UTF8.self)
        )
    }
}

/// Reads a pipe to its end on a thread of its own.
final class ErrorsReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle?) {
        Thread.detachNewThread { [self] in
            data = handle?.readDataToEndOfFile() ?? Data()
            done.signal()
        }
    }

    /// Everything read, once the pipe ended.
    func finish() -> Data {
        done.wait()
        return data
    }
}

/// `airports serve` started as its own process: the process, its standard output (past the
/// banner) and the banner line it printed once it listened.
func startServe(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
    process: ChildProcess, output: FileHandle, banner: String
) {
    let server = try ChildProcess.run(
        try airportsBinary(), ["serve"] + arguments,
        environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, errors: .inherit)
    guard let pipe = server.output else { throw POSIXError(.EPIPE) }
    let reader = pipe
    let banner = try await offPool {
        var banner = Data()
        while !banner.contains(UInt8(ascii: "\n")) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            banner += chunk
        }
        return String(decoding: banner, as: UTF8.self)
    }
    return (server, reader, banner)
}

extension AirportsServer.Access {
    /// Writes with the tests' token.
    static var testing: AirportsServer.Access { AirportsServer.Access(writeTokens: [testWriteToken]) }
}
