import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// The bundled airports of a few countries (Norway, Iceland, Denmark by default): enough rows for
/// several feed pages, quick to import in a debug build.
/// Parsed off the cooperative pool: other suites' tasks run meanwhile.
func someAirports(_ countries: Set<String> = ["NO", "IS", "DK"]) async throws -> [Airport] {
    let url = try #require(AirportsCSV.bundledURL)
    let text = try String(contentsOf: url, encoding: .utf8)
    return try await AirportsCSV.parseOffThePool(text, file: url.lastPathComponent).filter {
        countries.contains($0.country)
    }
}

/// An airports API over a fresh SQLite store holding `airports`, on 127.0.0.1; stopped after `body`.
func withSyncServer(
    _ airports: [Airport]? = nil, limits: AirportsServer.Limits = AirportsServer.Limits(), on given: (any Store)? = nil,
    _ body: (AirportsServer, any Store) async throws -> Void
) async throws {
    let store = try given ?? SQLiteStore.temporary()
    let rows: [Airport]
    if let airports { rows = airports } else { rows = try await someAirports() }
    try await store.repository(Airport.self).insert(rows)
    let server = try await AirportsServer.start(
        store: store, limits: limits, access: AirportsServer.Access(writeTokens: [testWriteToken]))
    try await withCleanup {
        try await body(server, store)
    } cleanup: {
        await server.stop()
    }
}

/// ``withSyncServer(_:limits:on:_:)`` for a body on the main actor (live objects, views), given
/// the server's address and its store.
func withSyncServerOnMain(_ body: @escaping @MainActor (URL, any Store) async throws -> Void) async throws {
    try await withSyncServer { server, serverStore in try await body(server.baseURL, serverStore) }
}

/// A clock a test moves by hand: edit times for last-writer-wins without sleeping.
final class TestClock: Sendable {
    private let now: Mutex<Date>

    /// A clock at `start`: by default in 2023, before any server's clock, as an honest client's is.
    init(at start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { now = Mutex(start) }

    /// The time now.
    func date() -> Date { now.withLock { $0 } }

    /// Sets the clock to `date`.
    func set(_ date: Date) { now.withLock { $0 = date } }

    /// Moves the clock on.
    func advance(_ seconds: Double = 1) { now.withLock { $0 += seconds } }

    var function: @Sendable () -> Date { { [self] in self.date() } }
}

/// A client replica: its own SQLite store and engine.
struct Replica {
    let store: SQLiteStore
    let engine: SyncEngine

    init(
        server: AirportsServer, conflicts: ConflictPolicy<Airport> = .lastWriterWins, clock: TestClock,
        pageSize: Int = 100, transport: (any Transport)? = nil
    ) throws {
        store = try SQLiteStore.temporary()
        let client =
            transport.map { APIClient(baseURL: server.baseURL, transport: $0, configuration: .writing) }
            ?? APIClient(baseURL: server.baseURL, configuration: .writing)
        engine = SyncEngine.airports(
            store: store, client: client, conflicts: conflicts, pageSize: pageSize, clock: clock.function)
    }

    var airports: Repository<Airport> { engine.store.repository(Airport.self) }

    func all() async throws -> [Airport] {
        try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
    }
}

func serverAirports(_ store: any Store) async throws -> [Airport] {
    try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
}
