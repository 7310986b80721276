import AirportsExample
import ArgumentParser
import Depot
import DepotSQLite
import Foundation

@main
struct Airports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "airports",
        abstract: "Depot's example: 28,298 real airports in a SQLite store.",
        subcommands: [Demo.self, Import.self, Query.self],
        defaultSubcommand: Demo.self)
}

/// The store path used when `--store` is not given.
let defaultStorePath = "airports.sqlite"

func write(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> ExitCode {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
    return ExitCode.failure
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import the bundled CSV into a temporary SQLite store and show queries and a partial update.")

    func run() async throws {
        do {
            try await AirportsDemo.run(say: write)
        } catch {
            throw fail("\(error)")
        }
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an airports CSV into a SQLite store (all rows or none).")

    @Option(help: "The CSV to import (default: the bundled airports.csv).")
    var csv: String?

    @Option(help: "The SQLite store (default: \(defaultStorePath)).")
    var store: String = defaultStorePath

    func run() async throws {
        let url: URL
        if let csv {
            url = URL(fileURLWithPath: csv)
        } else if let bundled = AirportsCSV.bundledURL {
            url = bundled
        } else {
            throw fail("the bundled airports.csv is missing; pass --csv")
        }
        let interactive = isatty(STDOUT_FILENO) == 1
        do {
            let database = try SQLiteStore(path: store)
            let summary = try await AirportImporter.run(csv: url, into: database) { done, total in
                if interactive {
                    let width = 30
                    let filled = total == 0 ? width : done * width / total
                    let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
                    FileHandle.standardOutput.write(Data("\r[\(bar)] \(done)/\(total)".utf8))
                    if done == total { write("") }
                } else if done == total {
                    write("parsed \(total) rows")
                }
            }
            write(
                "imported \(summary.rows) airports into \(store) in "
                    + String(format: "%.2f", summary.parseSeconds + summary.storeSeconds) + " s")
        } catch {
            throw fail("\(error)")
        }
    }
}

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Query a store; every filter and the order run inside the store.")

    @Option(help: "The SQLite store (default: \(defaultStorePath)).")
    var store: String = defaultStorePath

    @Option(help: "Two-letter country code, e.g. NO.")
    var country: String?

    @Option(help: "Text matched case-insensitively as a substring of name or city.")
    var search: String?

    @Option(help: "LAT,LON: order by great-circle distance from this point.")
    var near: String?

    @Option(name: .customLong("min-elevation"), help: "Minimum elevation in feet.")
    var minimumElevation: Double?

    @Option(help: "Maximum number of results.")
    var limit: Int = 20

    @Flag(help: "Print a JSON array.")
    var json = false

    func validate() throws {
        if let near, Self.coordinate(near) == nil {
            throw ValidationError("--near takes LAT,LON in degrees, e.g. 59.91,10.75 (got '\(near)')")
        }
        if limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    static func coordinate(_ text: String) -> Coordinate? {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let latitude = parts[0], let longitude = parts[1], (-90...90).contains(latitude),
            (-180...180).contains(longitude)
        else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    func run() async throws {
        guard FileManager.default.fileExists(atPath: store) else {
            throw fail("no store at \(store); run `airports import --store \(store)` first")
        }
        let query = AirportQuery(
            country: country, search: search, near: near.flatMap(Self.coordinate), minimumElevation: minimumElevation,
            limit: limit)
        do {
            let results = try await query.run(on: SQLiteStore(path: store).repository(Airport.self))
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                write(String(decoding: try encoder.encode(results), as: UTF8.self))
            } else {
                for result in results {
                    let airport = result.airport
                    var line = "\(airport.icao)\t\(airport.iata ?? "-")\t\(airport.country)\t"
                    line += "\(airport.elevation) ft\t\(airport.name)"
                    if let distance = result.distanceKilometers { line += "\t" + String(format: "%.1f km", distance) }
                    write(line)
                }
            }
        } catch {
            throw fail("\(error)")
        }
    }
}
