import Depot
import DepotHTTP
import DepotSQLite
import Foundation

/// `airports demo`: the data layer end to end on the bundled real data — an API serves a
/// server-side SQLite store, a client syncs its own SQLite store through typed endpoints, a
/// partial update travels from one to the other, and queries run in the client's store.
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
        let server = try await AirportsServer.start(store: serverStore)
        do {
            try await clientSide(server: server, folder: folder, clock: clock, say: say)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        say("✓ server stopped")
        say("Done.")
    }

    static func clientSide(
        server: AirportsServer, folder: URL, clock: ContinuousClock, say: @escaping @Sendable (String) -> Void
    ) async throws {
        say("✓ server: airports API listening on \(server.baseURL.absoluteString)")
        let client = APIClient(baseURL: server.baseURL)
        let clientStore = try SQLiteStore(path: folder.appendingPathComponent("client.sqlite").path)
        let airports = clientStore.repository(Airport.self)

        let first = try await AirportsSync.run(client: client, into: clientStore)
        let total = try await airports.count()
        say(
            "✓ client: \(first.kind.rawValue) sync, \(first.received) airports in \(first.requests) requests, "
                + "\(format(first.seconds)) s; the client store holds \(total)")
        guard total == first.received else {
            throw DepotError(.storage, "the client holds \(total) airports after syncing \(first.received)")
        }

        // The client's store brought to the example's latest schema: names tidied, the coordinates
        // index and the search indexes that the queries below read.
        var started = clock.now
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
        let next = try await AirportsSync.run(client: client, into: clientStore)
        let after = try await airports.find("ENGM")
        var expected = before
        expected?.name = newName
        let intact = after == expected
        say(
            "✓ client: \(next.kind.rawValue) sync, \(next.received) change in \(next.requests) request "
                + "(\(milliseconds(clock.now - started)) ms)")
        say("    name: \(before?.name ?? "-") → \(after?.name ?? "-"); every other field intact: \(intact)")
        guard intact, next.kind == .incremental, next.received == 1 else {
            throw DepotError(.storage, "the partial update did not arrive intact: \(String(describing: after))")
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

    static func format(_ value: Double) -> String {
        String(format: "%.2f", value)
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", duration.seconds * 1000)
    }
}
