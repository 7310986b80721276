// The samples that open a file in the current folder or in Application Support, bootstrap the
// process's logging, metrics and tracing, or print in a loop until cancelled: each runs in a child
// process of its own (see SampleChild), with a fresh temporary folder as its current folder and
// Application Support, and is checked there by the files it leaves and the lines it prints.
import CoreMetrics
import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import Foundation
import Testing
import Tracing

/// The child's test: the filter the parent starts it with.
private let childTest = "ReadmeTests.ProcessSampleChild"

/// The samples the child runs, by name.
enum ProcessSample: String, CaseIterable, CustomTestStringConvertible {
    case quickStartOnSQLite = "quick-start-sqlite"
    case quickStartOnPostgres = "quick-start-postgres"
    case openAppStore = "open-app-store"
    case loggingAndMetrics = "logging-and-metrics"
    case startApp = "start-app"
    case observationLoop = "observation-loop"
    case articleLoop = "article-loop"
    case mappersLoop = "mappers-loop"

    /// What the child checks.
    var testDescription: String {
        switch self {
        case .quickStartOnSQLite:
            "the quick start on SQLite creates airports.sqlite in the current folder and leaves ENGM in it"
        case .quickStartOnPostgres: "the quick start on PostgreSQL runs on the server DATABASE_URL names"
        case .openAppStore: "the setup article's openAppStore migrates app.sqlite in Application Support"
        case .loggingAndMetrics:
            "the operating samples: a logging store and a measured store open app.sqlite in the current folder"
        case .startApp: "startApp bootstraps logging, metrics and tracing once, and its store and client work"
        case .observationLoop:
            "the observation sample prints Norway's airports, again after a commit, and ends when cancelled"
        case .articleLoop:
            "the observation article's printNorway prints the list, again after a commit, and ends when cancelled"
        case .mappersLoop:
            "the mappers sample's loop prints the online bots, again after a persist, and ends when cancelled"
        }
    }
}

@Suite("README samples that need a process of their own")
struct ProcessSampleTests {
    @Test(
        "each runs in a child process and leaves the files and prints the lines it says",
        .enabled(if: SampleChild.isSupported, "Linux only: the child is this test binary run again"),
        arguments: ProcessSample.allCases.filter { $0 != .quickStartOnPostgres })
    func runsInAChildProcess(_ sample: ProcessSample) async throws {
        try await SampleChild.run(sample.rawValue, filter: childTest)
    }

    @Test(
        "the quick start on PostgreSQL runs on the server DATABASE_URL names",
        .enabled(if: SampleChild.isSupported, "Linux only: the child is this test binary run again"),
        .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"))
    func quickStartOnTheServerOfDatabaseURL() async throws {
        let url = try PostgresEnvironment.scratchURL()  // under CI=true, a missing server fails here
        try await SampleChild.run(
            ProcessSample.quickStartOnPostgres.rawValue, filter: childTest, environment: ["DATABASE_URL": url])
        let store = try PostgresStore(url: url)
        try await withCleanup {
            let codes = try await store.repository(Airport.self).fetch().map(\.icao)
            #expect(codes == ["ENGM"], "the quick start leaves Oslo in the schema DATABASE_URL names")
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }
}

/// The child's half: one test, enabled only in a child the tests above start.
@Suite("README samples that need a process of their own: the child process's half")
struct ProcessSampleChild {
    @Test(
        "runs the sample its parent names, in a fresh current folder and Application Support",
        .enabled(if: SampleChild.requested != nil, "runs only in the child process a ProcessSampleTests test starts"))
    func runsTheRequestedSample() async throws {
        let name = try #require(SampleChild.requested)
        let sample = try #require(ProcessSample(rawValue: name), "no sample named \(name)")
        let folder = try SampleChild.enterScratchFolder()
        try await run(sample, in: folder)
        SampleChild.passed()
    }

    private func run(_ sample: ProcessSample, in folder: URL) async throws {
        switch sample {
        case .quickStartOnSQLite:
            let path = folder.appendingPathComponent("airports.sqlite").path
            try await addNorway(to: try SQLiteStore(path: path))
            try await quickStartOnSQLite()
            // The quick start's transaction replaced Norway with the two high airports, then removed ENBR.
            #expect(try await airportCodes(inFile: path) == ["ENGM"])
        case .quickStartOnPostgres:
            let store = try PostgresStore(url: try #require(ProcessInfo.processInfo.environment["DATABASE_URL"]))
            try await addNorway(to: store)
            await store.close()
            try await quickStartOnPostgres()  // the parent checks what it left
        case .openAppStore:
            let migrations = Migrations([Migration("1 airports", [.createTable(Airport.self)])])
            let store = try await openAppStore(migrations: migrations, entities: [Airport.self])
            #expect(try await store.appliedMigrations().map(\.name) == ["1 airports"])
            let path = try SampleChild.applicationSupport(in: folder).appendingPathComponent("app.sqlite").path
            #expect(FileManager.default.fileExists(atPath: path), "no file at \(path)")
        case .loggingAndMetrics:
            try storesThatLog()
            try storeWithMetrics()
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("app.sqlite").path))
        case .startApp:
            let api = try #require(URL(string: "http://127.0.0.1:9/"))
            let (store, client) = try startApp(metrics: NOOPMetricsHandler.instance, tracer: NoOpTracer(), api: api)
            try await addNorway(to: store)
            try await quickStart(store: store)
            #expect(try await store.repository(Airport.self).count() == 1)
            #expect(client.baseURL.absoluteString == "http://127.0.0.1:9/")
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("app.sqlite").path))
        case .observationLoop, .articleLoop, .mappersLoop:
            try await runLoop(sample)
        }
    }

    private func runLoop(_ sample: ProcessSample) async throws {
        let store = InMemoryStore()
        try await addNorway(to: store)
        let airports = store.repository(Airport.self)
        switch sample {
        case .observationLoop:
            try await airports.insert(oslo)
            // Cancelling ends every loop of the sample, without an error.
            try await checkLoop(
                { try await observeNorway(store: store) }, printsFirst: #"["Oslo Gardermoen"]"#,
                after: { try await airports.insert(bergen) }, printsNext: #"["Bergen Flesland", "Oslo Gardermoen"]"#)
        case .articleLoop:
            try await checkLoop(
                { try await printNorway(airports) }, printsFirst: "[]",
                after: { try await airports.insert([bergen, oslo]) },
                printsNext: #"["Bergen Flesland", "Oslo Gardermoen"]"#)
        default:
            let users = store.repository(UserEntity.self).mapped(by: UserMapper())
            let decoded = try JSONDecoder().decode([UserResponse].self, from: MappersSampleTests.first)
            _ = try await users.persist(decoded, mapper: UserResponseMapper())
            let onlineBots = Query<UserEntity>(where: \.kind == "bot" && \.isOnline == true)
                .sorted(by: .ascending(\.name))
            let again = try JSONDecoder().decode([UserResponse].self, from: MappersSampleTests.second)
            try await checkLoop(
                { try await printOnlineBots(users, onlineBots) }, printsFirst: #"["R2"]"#,
                after: { _ = try await users.persist(again, mapper: UserResponseMapper()) },
                printsNext: #"["C3", "R2-D2"]"#)
        }
    }

    /// Starts `loop` (a sample that prints until cancelled), checks the line it prints first, runs
    /// `change`, checks the line it prints next, then cancels it: it must end without an error.
    private func checkLoop(
        _ loop: @escaping @Sendable () async throws -> Void, printsFirst first: String,
        after change: () async throws -> Void, printsNext next: String
    ) async throws {
        let output = CapturedOutput()
        let task = Task {
            do {
                try await loop()
            } catch {
                print("the loop failed: \(error)")  // a line for the reader waiting on the pipe
                throw error
            }
        }
        #expect(try await output.nextLine() == first)
        try await change()
        #expect(try await output.nextLine() == next)
        task.cancel()
        try await task.value
    }
}

/// Adds the country the quick start's airports name: in this module the relations sample gives
/// `Airport` a to-one relation to `Country`, which the store enforces.
private func addNorway(to store: some Store) async throws {
    try await store.repository(Country.self).upsert(Country(code: "NO", name: "Norway", continent: "EU"))
}

/// The airports of the SQLite file at `path`, by code.
private func airportCodes(inFile path: String) async throws -> [String] {
    let store = try SQLiteStore(path: path)
    return try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)]).map(\.icao)
}

/// Two of the quick start's airports.
private let oslo = Airport(
    icao: "ENGM", iata: "OSL", name: "Oslo Gardermoen", country: "NO", elevation: 681, latitude: 60.1939,
    longitude: 11.1004)
private let bergen = Airport(
    icao: "ENBR", iata: "BGO", name: "Bergen Flesland", country: "NO", elevation: 170, latitude: 60.2934,
    longitude: 5.21814)
