import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import Foundation

/// `airports demo`: the data layer end to end on the bundled real data — an API serves a
/// server-side SQLite store; two clients copy it through DepotSync, edit the same airport offline,
/// sync, resolve the conflict and converge; a partial update travels from the server to a client,
/// and queries run in the client's store.
public enum AirportsDemo {
    /// Runs the demo in a temporary folder, reporting each step through `say`.
    public static func run(say: @escaping @Sendable (String) -> Void) async throws {
        let clock = ContinuousClock()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("airports-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let csv = AirportsCSV.bundledURL else {
            throw AirportsCSV.Problem(file: "airports.csv", line: 0, reason: "the bundled CSV is missing")
        }
        say("Depot airports demo — two SQLite stores in \(folder.path)")

        // The server side: import, then serve.
        let serverStore = try SQLiteStore(path: folder.appendingPathComponent("server.sqlite").path)
        let summary = try await AirportImporter.run(csv: csv, into: serverStore)
        say(
            "✓ server: imported \(summary.rows) airports from the bundled CSV in "
                + "\(format(summary.parseSeconds + summary.storeSeconds)) s (parse \(format(summary.parseSeconds)) s, "
                + "store \(format(summary.storeSeconds)) s, one transaction)")
        // Writes need the server's write token; this run makes one of its own.
        let token = UUID().uuidString
        let server = try await AirportsServer.start(
            store: serverStore, access: AirportsServer.Access(writeTokens: [token]))
        do {
            try await clientSide(
                server: server, token: token, serverStore: serverStore, folder: folder, clock: clock, say: say)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        say("✓ server stopped")
        say("Done.")
    }

    static func clientSide(
        server: AirportsServer, token: String, serverStore: any Store, folder: URL, clock: ContinuousClock,
        say: @escaping @Sendable (String) -> Void
    ) async throws {
        say("✓ server: airports API listening on \(server.baseURL.absoluteString), writes with a token")
        var configuration = APIClient.Configuration()
        configuration.headers["Authorization"] = "Bearer \(token)"
        let client = APIClient(baseURL: server.baseURL, configuration: configuration)
        let clientStore = try SQLiteStore(path: folder.appendingPathComponent("client.sqlite").path)
        let otherStore = try SQLiteStore(path: folder.appendingPathComponent("other-client.sqlite").path)
        // Both clients sync through DepotSync: local edits go to an outbox, the feed is pulled from a
        // stored cursor; conflicts are resolved field by field, the later edit winning.
        let engine = SyncEngine.airports(store: clientStore, client: client)
        let other = SyncEngine.airports(store: otherStore, client: client)
        let airports = clientStore.repository(Airport.self)

        var started = clock.now
        let first = try await engine.sync()
        let total = try await airports.count()
        say(
            "✓ client: first sync, \(first.pulledRows) airports in \(first.requests) requests, "
                + "\(milliseconds(clock.now - started)) ms; the client store holds \(total)")
        started = clock.now
        let copied = try await other.sync()
        say("✓ other client: first sync, \(copied.pulledRows) airports (\(milliseconds(clock.now - started)) ms)")
        guard total == first.pulledRows, copied.pulledRows == total else {
            throw DepotError(.storage, "the client holds \(total) airports after syncing \(first.pulledRows)")
        }
        try await offlineEdits(engine: engine, other: other, serverStore: serverStore, say: say)

        // The client's store brought to the example's latest schema: names tidied, the coordinates
        // index and the search indexes that the queries below read.
        started = clock.now
        let migrated = try await AirportsMigrations.run(on: clientStore)
        say(
            "✓ client: migrated to version \(migrated.to) (\(migrated.steps.joined(separator: ", "))) "
                + "(\(milliseconds(clock.now - started)) ms)")

        // A partial update on the server, carried to the client by the next sync.
        started = clock.now
        let before = try await airports.find("ENGM")
        let newName = "Oslo Airport, Gardermoen (renamed by PATCH)"
        var change = AirportRecord(icao: "ENGM")
        change.name = newName
        let answered = try await client.send(AirportsAPI.Update(change))
        say(
            "✓ PATCH /airports/ENGM {\"name\": …} → 200, server now says \"\(answered.name ?? "-")\" "
                + "(\(milliseconds(clock.now - started)) ms)")
        started = clock.now
        let next = try await engine.sync()
        let after = try await airports.find("ENGM")
        var expected = before
        expected?.name = newName
        let intact = after == expected
        say(
            "✓ client: sync, \(next.pulledRows) change in \(next.requests) request "
                + "(\(milliseconds(clock.now - started)) ms)")
        say("    name: \(before?.name ?? "-") → \(after?.name ?? "-"); every other field intact: \(intact)")
        guard intact, next.pulledRows == 1 else {
            throw DepotError(.storage, "the partial update did not arrive intact: \(String(describing: after))")
        }

        // One airport as a screen asks for it: a resource fetches it, stores it through its mapper
        // and hands it out as a card; an unknown one is the API's typed error body.
        let loader = try ResourceLoader(engine: engine)
        started = clock.now
        let card = try await loader.load(.airport("ENBR", policy: .networkFirst), mappedBy: AirportCardMapper()).first
        say(
            "✓ client: GET /airports/ENBR through a resource, stored and mapped: \(card?.title ?? "-"), "
                + "\(card?.place ?? "-"), \(card?.elevationMeters ?? 0) m (\(milliseconds(clock.now - started)) ms)")
        do {
            _ = try await loader.load(.airport("ZZZZ", policy: .networkFirst))
            throw DepotError(.storage, "the API answered an airport ZZZZ")
        } catch let error as HTTPError where error.kind == .notFound {
            guard let problem = error.errorBody(as: AirportsAPI.Problem.self) else {
                throw DepotError(.decodingFailed, "GET /airports/ZZZZ answered no {\"error\": …} body: \(error.detail)")
            }
            say("✓ client: GET /airports/ZZZZ → \(error.status ?? 0), the API's error body: \"\(problem.error)\"")
        }

        // Queries, each run inside the client's store.
        started = clock.now
        let withIATA = try await airports.count(where: \.iata != nil)
        say("✓ \(withIATA) airports with an IATA code (\(milliseconds(clock.now - started)) ms)")

        started = clock.now
        let highNorway = try await airports.fetch(
            where: \.country == "NO" && \.elevation > 1500, orderBy: [.descending(\.elevation)], limit: 3)
        say("✓ highest Norwegian airports above 1,500 ft (\(milliseconds(clock.now - started)) ms):")
        for airport in highNorway { say("    \(airport.icao)  \(airport.name)  \(format(airport.elevation)) ft") }

        started = clock.now
        let scanned = try await AirportQuery(contains: "são", limit: 3).run(on: airports)
        let scanTime = milliseconds(clock.now - started)
        started = clock.now
        let search = try await AirportQuery(search: "são", limit: 3).run(on: airports)
        say(
            "✓ name or city has a word starting \"são\", any case, through the search index "
                + "(\(milliseconds(clock.now - started)) ms; a scan folding every name and city: \(scanTime) ms, "
                + "\(scanned.count) rows):")
        for result in search {
            say("    \(result.airport.icao)  \(result.airport.name) (\(result.airport.city ?? "-"))")
        }

        started = clock.now
        let oslo = Coordinate(latitude: 59.9139, longitude: 10.7522)
        let ordered = try await airports.fetch(
            orderBy: [.nearest(to: oslo, latitude: \.latitude, longitude: \.longitude)], limit: 5)
        let orderTime = milliseconds(clock.now - started)
        started = clock.now
        let nearest = try await AirportQuery(near: oslo, limit: 5).run(on: airports)
        say(
            "✓ 5 nearest to Oslo city centre through the coordinates index (\(milliseconds(clock.now - started)) ms; "
                + "a scan of every row ordered by distance: \(orderTime) ms, same answer: "
                + "\(ordered.map(\.icao) == nearest.map(\.airport.icao) ? "yes" : "no")):")
        for result in nearest {
            say("    \(result.airport.icao)  \(format(result.distanceKilometers ?? 0)) km  \(result.airport.name)")
        }
        started = clock.now
        let around = try await airports.count(
            where: .within(kilometers: 50, of: oslo, latitude: \.latitude, longitude: \.longitude))
        say("✓ \(around) airports within 50 km of Oslo (\(milliseconds(clock.now - started)) ms)")

        started = clock.now
        let removed = try await airports.remove(where: \.country == "AQ")
        say(
            "✓ client: removed \(removed) Antarctic airports in one statement (\(milliseconds(clock.now - started)) ms)"
        )
    }

    /// Two clients edit ENGM offline — the same member and one each — then sync: the conflict is
    /// resolved (the later edit wins that member), both edits of different members land, and the
    /// server and both clients end with the same 28,298 rows.
    static func offlineEdits(
        engine: SyncEngine, other: SyncEngine, serverStore: any Store, say: @escaping @Sendable (String) -> Void
    ) async throws {
        try await engine.store.repository(Airport.self).update(
            where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo lufthavn"), .set(\.city, to: "Gardermoen")])
        say(
            "✓ client (offline): ENGM name → \"Oslo lufthavn\", city → \"Gardermoen\"; pending: "
                + "\(try await engine.status().pendingChanges)")
        try await Task.sleep(for: .milliseconds(5))  // the other edit is the later one
        try await other.store.repository(Airport.self).update(
            where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo Gardermoen"), .set(\.iata, to: nil)])
        say("✓ other client (offline, later): ENGM name → \"Oslo Gardermoen\", iata → null")
        let pushed = try await engine.sync()
        say("✓ client: sync pushed \(pushed.pushed) edit in \(pushed.requests) requests")
        let resolved = try await other.sync()
        say(
            "✓ other client: sync met \(resolved.conflicts) conflict on name (both changed it since the last sync); "
                + "last writer wins: its later edit is pushed, the client's city is kept")
        try await engine.sync()
        let server = try await serverStore.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
        let mine = try await engine.base.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
        let theirs = try await other.base.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
        let engm = server.first { $0.icao == "ENGM" }
        say(
            "✓ converged: server and both clients hold the same \(server.count) airports: \(mine == server && theirs == server); "
                + "ENGM is \"\(engm?.name ?? "-")\", city \(engm?.city ?? "-"), iata \(engm?.iata ?? "null")")
        guard mine == server, theirs == server, engm?.name == "Oslo Gardermoen", engm?.city == "Gardermoen",
            engm?.iata == nil
        else {
            throw DepotError(.storage, "the replicas did not converge: ENGM is \(String(describing: engm))")
        }
    }

    static func format(_ value: Double) -> String {
        String(format: "%.2f", value)
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", duration.seconds * 1000)
    }
}
