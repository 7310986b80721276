import AirportsExample
import ArgumentParser
import Depot
import DepotSync
import Foundation

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Query a store; every filter and the order run inside the store.",
        discussion: """
            EXAMPLES
              airports query --country NO --min-elevation 1000 --limit 5
              airports query --search "são" --json
              airports query --near -33.87,151.21 --limit 5      (Sydney: negative values are fine)
              airports query --min-elevation -100 --country NL
            """)

    @OptionGroup var source: StoreOptions

    @Option(help: "Two-letter country code, e.g. NO.")
    var country: String?

    @Option(
        help: ArgumentHelp(
            "Words that start words of the name (or of the city), any case, e.g. \"osl gard\"; needs the "
                + "search index of `airports migrate`."))
    var search: String?

    // `.unconditional`: a value may start with "-" (southern latitudes, western longitudes, places
    // below sea level) instead of being read as another flag.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Order by great-circle distance from this point, in degrees, e.g. -33.87,151.21.", valueName: "lat,lon"))
    var near: String?

    @Option(
        name: .customLong("min-elevation"), parsing: .unconditional,
        help: ArgumentHelp("Minimum elevation in feet, e.g. 1000 or -100.", valueName: "feet"))
    var minimumElevation: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Maximum number of results, e.g. 5.", valueName: "count"))
    var limit: Int = 20

    @Flag(help: "Print a JSON array.")
    var json = false

    func validate() throws {
        if let near, Coordinate(parsing: near) == nil {
            throw ValidationError(
                "--near takes LAT,LON in degrees, latitude -90…90 and longitude -180…180, e.g. -33.87,151.21 "
                    + "(got '\(near)')")
        }
        if limit < 0 { throw ValidationError("--limit must not be negative, e.g. --limit 5 (got \(limit))") }
    }

    func run() async throws {
        let query = AirportQuery(
            country: country, search: search, near: near.flatMap(Coordinate.init(parsing:)),
            minimumElevation: minimumElevation, limit: limit)
        let (results, pending) = try await source.withStore(existing: true) { store in
            let results = try await query.run(on: store.repository(Airport.self))
            // Airports with local edits `airports sync` has not pushed yet.
            let pending = try await SyncEngine.airports(store: store, client: nil).pendingKeys(
                Airport.self, as: String.self)
            return (results, pending)
        }
        if json {
            let marked = results.map { PendingMarked(result: $0, pending: pending.contains($0.airport.icao)) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            write(String(decoding: try encoder.encode(marked), as: UTF8.self))
        } else {
            for result in results {
                let airport = result.airport
                var line = "\(airport.icao)\t\(airport.iata ?? "-")\t\(airport.country)\t"
                line += "\(airport.elevation) ft\t\(airport.name)"
                if let distance = result.distanceKilometers { line += "\t" + String(format: "%.1f km", distance) }
                if pending.contains(airport.icao) { line += "\t(pending)" }
                write(line)
            }
        }
    }
}

/// A query result with `"pending": true` when it has local edits not pushed yet (absent otherwise).
struct PendingMarked: Encodable {
    var result: AirportResult
    var pending: Bool

    enum CodingKeys: String, CodingKey { case pending }

    func encode(to encoder: any Encoder) throws {
        try result.encode(to: encoder)
        if pending {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(true, forKey: .pending)
        }
    }
}
