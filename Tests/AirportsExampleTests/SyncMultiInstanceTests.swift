import AirportsExample
import Depot
import DepotHTTP
import DepotPostgres
import DepotSQL
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Testing

// Axes crossed (ATTACK.md): processes (two `airports serve` on one PostgreSQL database, behind a
// PgBouncer in transaction mode) × who (a client of every airport, one of Norway's, one of
// Iceland's: scopes) × what changes (edits, deletes, airports moving between the two countries:
// scope changes) × the network (responses lost after the server applied them, requests delivered
// twice, bursts of 503, delays that reorder) × time (a seeded schedule; each client pushes and
// pulls when the schedule says).

@Suite(
    "Sync: two server processes behind PgBouncer, three scoped clients",
    .enabled(if: PostgresEnvironment.isBouncerConfigured, "DEPOT_PGBOUNCER_URL is not set"),
    .serialized, .timeLimit(.minutes(15)))
struct SyncMultiInstanceTests {
    /// One client: its engine, the transport that injects faults, and the edits it made.
    struct Client: Sendable {
        let engine: SyncEngine
        let transport: FaultTransport
        let country: String?
        /// The field this client edits, and the last value it gave each airport.
        var edits: [String: StoredValue] = [:]
        var airports: Repository<Airport> { engine.store.repository(Airport.self) }
        var local: Repository<Airport> { engine.base.repository(Airport.self) }
    }

    @Test(
        "every client ends with what its scope allows of the server, no edit lost, none applied twice",
        arguments: [11, 29, 47] as [UInt64])
    func scopedClientsConverge(seed: UInt64) async throws {
        let (pooled, direct) = try PostgresEnvironment.requireBouncer()
        // A clean database: the tables live in `public` (PgBouncer passes no search_path).
        let setup = try PostgresStore(url: direct)
        try await withCleanup {
            try await setup.eraseDatabase()
            let countries = bundledAirports.filter { $0.country == "NO" || $0.country == "IS" }
            try await setup.repository(Airport.self).insert(countries)
            let first = try await startServe(
                ["--postgres", pooled, "--port", "0", "--write-token", testWriteToken])
            let second = try await startServe(
                ["--postgres", pooled, "--port", "0", "--write-token", testWriteToken])
            try await withCleanup {
                let urls = try [first.banner, second.banner].map { banner in
                    let text = try #require(
                        banner.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }, "\(banner)")
                    return try #require(URL(string: String(text)))
                }
                var clients = try [nil, "NO", "IS"].enumerated().map { index, country in
                    let transport = FaultTransport(seed: seed &+ UInt64(index), rates: .harsh)
                    let client = APIClient(baseURL: urls[index % 2], transport: transport, configuration: .writing)
                    return Client(
                        engine: SyncEngine.airports(
                            store: try SQLiteStore.temporary(), client: client, pageSize: 50, country: country),
                        transport: transport, country: country)
                }
                for index in clients.indices { try await syncPatiently(clients[index].engine) }
                try await run(schedule: seed, clients: &clients)
                // A quiet network, then every client settles what the server refused, until it converges.
                for client in clients { client.transport.set(.none) }
                var refused: [Int: Set<String>] = [:]
                for _ in 0..<4 {
                    for index in clients.indices {
                        try await syncPatiently(clients[index].engine)
                        for change in try await clients[index].engine.rejectedChanges() {
                            if case .text(let icao) = change.key.first { refused[index, default: []].insert(icao) }
                            try await clients[index].engine.discard(change)
                        }
                    }
                }
                for index in clients.indices { try await syncPatiently(clients[index].engine) }

                let server = try await setup.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
                for (index, client) in clients.enumerated() {
                    let expected = server.filter { airport in client.country.map { airport.country == $0 } ?? true }
                    let local = try await client.local.fetch(orderBy: [.ascending(\.icao)])
                    #expect(local == expected, "client \(index) (\(client.country ?? "all")) differs from the server")
                    #expect(try await client.engine.pendingChanges().isEmpty, "client \(index) has edits left")
                    // No edit lost: each client alone edits its field; its last edit of an airport
                    // the server still has stands there, unless the server refused it.
                    for (icao, value) in client.edits where !(refused[index]?.contains(icao) ?? false) {
                        guard let airport = server.first(where: { $0.icao == icao }) else { continue }
                        #expect(
                            Self.field(of: airport, index) == value,
                            "client \(index)'s last edit of \(icao) was \(value), the server has \(Self.field(of: airport, index))"
                        )
                    }
                }
                // None applied twice: only pushes write here, each applied one logs its row once and
                // keeps its key in the same transaction, so the log and the kept keys count alike.
                let (kept, logged) = try await syncLedgerAndLog(of: setup)
                #expect(logged == kept && kept > 0, "\(logged) log entries for \(kept) applied pushes")
                let faults = clients.map(\.transport.faults).reduce(into: [String: Int]()) {
                    $0.merge($1, uniquingKeysWith: +)
                }
                #expect(faults["drop", default: 0] + faults["duplicate", default: 0] > 0, "\(faults)")
                print(
                    "multi-instance sync, seed \(seed): edits \(clients.map(\.edits.count)), refused "
                        + "\(clients.indices.map { refused[$0]?.count ?? 0 }), \(logged) log entries, "
                        + "faults \(faults.sorted { $0.key < $1.key })")
            } cleanup: {
                for server in [first, second] {
                    server.process.terminate()
                    try? await offPool { server.process.waitUntilExit() }
                }
            }
        } cleanup: {
            await setup.close()
        }
    }

    /// The field client `index` edits: country (moves between the scopes), name, elevation.
    static func field(of airport: Airport, _ index: Int) -> StoredValue {
        switch index {
        case 0: .text(airport.country)
        case 1: .text(airport.name)
        default: .double(airport.elevation)
        }
    }

    /// The three clients at once, each its own seeded schedule of 20 steps: the client of every
    /// airport moves airports between Norway and Iceland and deletes a few; the Norwegian client
    /// renames, the Icelandic one changes elevations; each syncs now and then, through either server.
    func run(schedule seed: UInt64, clients: inout [Client]) async throws {
        let snapshot = clients
        let edits = try await withThrowingTaskGroup(of: (Int, [String: StoredValue]).self) { group in
            for (index, client) in snapshot.enumerated() {
                group.addTask {
                    (index, try await Self.steps(of: client, index: index, seed: seed &+ UInt64(index) &* 7919))
                }
            }
            return try await group.reduce(into: [Int: [String: StoredValue]]()) { $0[$1.0] = $1.1 }
        }
        for (index, edited) in edits { clients[index].edits = edited }
    }

    static func steps(of client: Client, index: Int, seed: UInt64) async throws -> [String: StoredValue] {
        var random = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func roll(_ bound: Int) -> Int {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return Int(random % UInt64(bound))
        }
        var edits: [String: StoredValue] = [:]
        var deletes = 0
        for step in 0..<20 {
            let local = try await client.local.fetch(orderBy: [.ascending(\.icao)])
            guard !local.isEmpty, roll(10) >= 4 else {
                // A sync; the network may fail it, and the next one goes on.
                _ = try? await client.engine.sync()
                continue
            }
            let airport = local[roll(local.count)]
            switch index {
            case 0 where deletes < 3 && roll(5) == 0:
                _ = try await client.airports.remove(airport.icao)
                deletes += 1
            case 0:
                let country = airport.country == "NO" ? "IS" : "NO"
                _ = try await client.airports.update(where: \.icao == airport.icao, set: [.set(\.country, to: country)])
                edits[airport.icao] = .text(country)
            case 1:
                let name = "Renamed \(step)"
                _ = try await client.airports.update(where: \.icao == airport.icao, set: [.set(\.name, to: name)])
                edits[airport.icao] = .text(name)
            default:
                let elevation = Double(step) + 0.5
                _ = try await client.airports.update(
                    where: \.icao == airport.icao, set: [.set(\.elevation, to: elevation)])
                edits[airport.icao] = .double(elevation)
            }
        }
        return edits
    }

    /// Syncs until a sync succeeds (the network may fail a few in a row), at most 20 times.
    func syncPatiently(_ engine: SyncEngine) async throws {
        try await retryingFailures { try await engine.sync() }
    }
}
