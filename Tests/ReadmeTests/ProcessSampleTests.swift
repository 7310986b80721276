// The samples that open a file in the current folder, write to Application Support or bootstrap
// the process's logging, metrics and tracing: each runs in a child process of its own (an exit
// test), with its current folder and its Application Support in a fresh temporary folder.
import CoreMetrics
import Depot
import DepotSQLite
import DepotTestSupport
import Foundation
import Synchronization
import Testing
import Tracing

/// A sample's check that failed in the child process: what it says reaches the parent's output.
struct SampleCheckFailed: Error, CustomStringConvertible {
    let description: String
}

/// Runs `body` in this (child) process with a fresh temporary folder as the current folder and
/// as `XDG_DATA_HOME` (where Foundation finds Application Support on Linux); returns the folder.
/// It exits with status 0 either way, saying on standard error whether its checks passed (what a
/// failed one found, too): the parent reads that through ``report(_:)``.
func inScratchProcess(_ body: (URL) async throws -> Void) async -> Never {
    do {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sample-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard FileManager.default.changeCurrentDirectoryPath(folder.path) else {
            throw SampleCheckFailed(description: "cannot enter \(folder.path)")
        }
        setenv("XDG_DATA_HOME", folder.path, 1)
        try await body(folder)
        FileHandle.standardError.write(Data("\(passedMarker)\n".utf8))
    } catch {
        FileHandle.standardError.write(Data("sample check failed: \(error)\n".utf8))
    }
    exit(0)
}

/// Throws ``SampleCheckFailed`` with `message` unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw SampleCheckFailed(description: message()) }
}

/// Adds the country the quick start's airports name: in this module the relations sample gives
/// `Airport` a to-one relation to `Country`, which the store enforces.
func addNorway(to store: some Store) async throws {
    try await store.repository(Country.self).upsert(Country(code: "NO", name: "Norway", continent: "EU"))
}

/// The airports of the SQLite file at `path`, by code.
func airportCodes(inFile path: String) async throws -> [String] {
    let store = try SQLiteStore(path: path)
    return try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)]).map(\.icao)
}

/// What a child process says on standard error when its checks passed.
let passedMarker = "sample checks passed"

/// Expects that a child process (see ``inScratchProcess(_:)``) said its checks passed; records
/// what it said otherwise.
func report(_ result: ExitTest.Result?) {
    guard let result else { return }  // it did not exit with 0: already recorded
    let said = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(said.contains(passedMarker), "the child process said: \(said)")
}

@Suite("README samples that need a process of their own")
struct ProcessSampleTests {
    @Test("the quick start on SQLite creates airports.sqlite in the current folder and leaves ENGM in it")
    func quickStartInTheCurrentFolder() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { folder in
                let path = folder.appendingPathComponent("airports.sqlite").path
                try await addNorway(to: try SQLiteStore(path: path))
                try await quickStartOnSQLite()
                try check(FileManager.default.fileExists(atPath: path), "no airports.sqlite in \(folder.path)")
                // The quick start's transaction replaced Norway with the two high airports, then removed ENBR.
                let codes = try await airportCodes(inFile: path)
                try check(codes == ["ENGM"], "airports.sqlite holds \(codes)")
            }
        }
        report(result)
    }

    @Test("the app launch sample creates Application Support and a migrated airports.sqlite in it")
    func appLaunchInApplicationSupport() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { folder in
                // Application Support does not exist yet: the sample creates the folder.
                let store = try await appLaunch()
                try await addNorway(to: store)
                try await quickStart(store: store)
                let support = try FileManager.default.url(
                    for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false)
                try check(support.path.hasPrefix(folder.path), "Application Support is \(support.path)")
                let path = support.appendingPathComponent("airports.sqlite").path
                let codes = try await airportCodes(inFile: path)
                try check(codes == ["ENGM"], "\(path) holds \(codes)")
                let reopened = try await appLaunch()  // a second launch: nothing to migrate, rows kept
                try check(try await reopened.repository(Airport.self).count() == 1, "a second launch lost rows")
            }
        }
        report(result)
    }

    @Test("the setup article's openAppStore migrates app.sqlite in Application Support")
    func openAppStoreInApplicationSupport() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { folder in
                let migrations = Migrations([Migration("1 airports", [.createTable(Airport.self)])])
                let store = try await openAppStore(migrations: migrations)
                try check(
                    try await store.appliedMigrations().map(\.name) == ["1 airports"], "the migration was not applied")
                let support = try FileManager.default.url(
                    for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false)
                let path = support.appendingPathComponent("app.sqlite").path
                try check(
                    path.hasPrefix(folder.path) && FileManager.default.fileExists(atPath: path), "no file at \(path)")
            }
        }
        report(result)
    }

    @Test("the operating samples: a logging store and a measured store open app.sqlite in the current folder")
    func loggingAndMetricsStores() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { folder in
                try storesThatLog()
                try storeWithMetrics()
                let path = folder.appendingPathComponent("app.sqlite").path
                try check(FileManager.default.fileExists(atPath: path), "no app.sqlite in \(folder.path)")
            }
        }
        report(result)
    }

    @Test("startApp bootstraps logging, metrics and tracing once, and its store and client work")
    func startAppBootstraps() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { folder in
                let (store, client) = try startApp(
                    metrics: NOOPMetricsHandler.instance, tracer: NoOpTracer(),
                    api: URL(string: "http://127.0.0.1:9/")!)
                try await addNorway(to: store)
                try await quickStart(store: store)
                try check(try await store.repository(Airport.self).count() == 1, "the store does not keep rows")
                try check(client.baseURL.absoluteString == "http://127.0.0.1:9/", "client at \(client.baseURL)")
                try check(
                    FileManager.default.fileExists(atPath: folder.appendingPathComponent("app.sqlite").path),
                    "no app.sqlite in \(folder.path)")
            }
        }
        report(result)
    }
}

/// Starts `loop` (a sample that prints in a loop until cancelled), checks the line it prints
/// first, runs `change`, checks the line it prints next, then cancels it: it must end without an
/// error. Runs in the child process; standard output goes to a pipe it reads.
func checkLoop(
    _ loop: @escaping @Sendable () async throws -> Void, printsFirst first: String,
    after change: () async throws -> Void, printsNext next: String
) async throws {
    let output = CapturedOutput()
    let task = Task { try await loop() }
    let printed = try await output.nextLine()
    try check(printed == first, "first printed \(printed ?? "nothing"), not \(first)")
    try await change()
    let then = try await output.nextLine()
    try check(then == next, "then printed \(then ?? "nothing"), not \(next)")
    task.cancel()
    try await task.value
}

@Suite("README observation samples, run until cancelled in a process of their own")
struct ObservationLoopSampleTests {
    @Test("the observation sample prints Norway's airports, again after a commit, and ends when cancelled")
    func observationSamplePrints() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { _ in
                let store = InMemoryStore()
                try await addNorway(to: store)
                let airports = store.repository(Airport.self)
                try await airports.insert(oslo)
                // Cancelling ends every loop of the sample, without an error.
                try await checkLoop(
                    { try await observeNorway(store: store) }, printsFirst: #"["Oslo Gardermoen"]"#,
                    after: { try await airports.insert(bergen) },
                    printsNext: #"["Bergen Flesland", "Oslo Gardermoen"]"#)
            }
        }
        report(result)
    }

    @Test("the observation article's printNorway prints the list, again after a commit, and ends when cancelled")
    func articleLoopPrints() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { _ in
                let store = InMemoryStore()
                try await addNorway(to: store)
                let airports = store.repository(Airport.self)
                try await checkLoop(
                    { try await printNorway(airports) }, printsFirst: "[]",
                    after: { try await airports.insert([bergen, oslo]) },
                    printsNext: #"["Bergen Flesland", "Oslo Gardermoen"]"#)
            }
        }
        report(result)
    }
}

extension ObservationLoopSampleTests {
    @Test("the mappers sample's loop prints the online bots, again after a persist, and ends when cancelled")
    func mappersLoopPrints() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            await inScratchProcess { _ in
                let store = InMemoryStore()
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
        report(result)
    }
}

/// Two of the quick start's airports.
let oslo = Airport(
    icao: "ENGM", iata: "OSL", name: "Oslo Gardermoen", country: "NO", elevation: 681, latitude: 60.1939,
    longitude: 11.1004)
let bergen = Airport(
    icao: "ENBR", iata: "BGO", name: "Bergen Flesland", country: "NO", elevation: 170, latitude: 60.2934,
    longitude: 5.21814)
