import Depot
import DepotSQLite
import Foundation

/// `airports demo`: the data layer end to end on the bundled real data, on SQLite.
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

        let store = try SQLiteStore(path: folder.appendingPathComponent("airports.sqlite").path)
        let airports = store.repository(Airport.self)
        say("Depot airports demo — SQLite store at \(store.path)")

        let summary = try await AirportImporter.run(csv: csv, into: store)
        say(
            "✓ imported \(summary.rows) airports from the bundled CSV in "
                + "\(format(summary.parseSeconds + summary.storeSeconds)) s (parse \(format(summary.parseSeconds)) s, "
                + "store \(format(summary.storeSeconds)) s, one transaction)")

        var started = clock.now
        let total = try await airports.count()
        let withIATA = try await airports.count(where: \.iata != nil)
        say("✓ \(total) airports, \(withIATA) with an IATA code (\(milliseconds(clock.now - started)) ms)")

        started = clock.now
        let highNorway = try await airports.fetch(
            where: \.country == "NO" && \.elevation > 1500, orderBy: [.descending(\.elevation)], limit: 3)
        say("✓ highest Norwegian airports above 1,500 ft (\(milliseconds(clock.now - started)) ms):")
        for airport in highNorway { say("    \(airport.icao)  \(airport.name)  \(format(airport.elevation)) ft") }

        started = clock.now
        let search = try await AirportQuery(search: "são", limit: 3).run(on: airports)
        say(
            "✓ name or city contains \"são\", any case, full Unicode folding (\(milliseconds(clock.now - started)) ms):"
        )
        for result in search {
            say("    \(result.airport.icao)  \(result.airport.name) (\(result.airport.city ?? "-"))")
        }

        started = clock.now
        let oslo = Coordinate(latitude: 59.9139, longitude: 10.7522)
        let nearest = try await AirportQuery(near: oslo, limit: 5).run(on: airports)
        say("✓ 5 nearest to Oslo city centre, haversine in the store (\(milliseconds(clock.now - started)) ms):")
        for result in nearest {
            say("    \(result.airport.icao)  \(format(result.distanceKilometers ?? 0)) km  \(result.airport.name)")
        }

        started = clock.now
        let before = try await airports.find("ENGM")
        let body = #"{"icao": "ENGM", "name": "Oslo Airport, Gardermoen (renamed by PATCH)"}"#
        let patch = try JSONDecoder().decode(AirportPatchDTO.self, from: Data(body.utf8))
        try await airports.persist([patch], mapper: AirportPatchMapper())
        let after = try await airports.find("ENGM")
        var expected = before
        expected?.name = "Oslo Airport, Gardermoen (renamed by PATCH)"
        let intact = after == expected
        say("✓ partial update \(body) (\(milliseconds(clock.now - started)) ms):")
        say("    name: \(before?.name ?? "-") → \(after?.name ?? "-"); every other field intact: \(intact)")
        guard intact else {
            throw DepotError(.storage, "the partial update changed fields it did not carry")
        }

        started = clock.now
        let removed = try await airports.remove(where: \.country == "AQ")
        say("✓ removed \(removed) Antarctic airports in one statement (\(milliseconds(clock.now - started)) ms)")
        say("Done.")
    }

    static func format(_ value: Double) -> String {
        String(format: "%.2f", value)
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", duration.seconds * 1000)
    }
}
