import AirportsExample
import ArgumentParser
import Depot
import DepotHTTP
import DepotPostgres
import DepotSQLite
import Foundation

@main
struct Airports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "airports",
        abstract: "Depot's example: 28,298 real airports, an HTTP API, a syncing client and queries.",
        subcommands: [Demo.self, Import.self, Serve.self, Sync.self, Query.self],
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

/// `--store PATH | --postgres URL`: where a command's airports live.
struct StoreOptions: ParsableArguments {
    @Option(help: "The SQLite store (default: \(defaultStorePath) in the current folder).")
    var store: String?

    @Option(help: "A PostgreSQL server instead of SQLite: postgres://user:password@host:port/database[?schema=name]")
    var postgres: String?

    func validate() throws {
        if store != nil, postgres != nil { throw ValidationError("give --store or --postgres, not both") }
    }

    /// What the messages call the store.
    var name: String { postgres.map(PostgresStore.Configuration.redacted) ?? store ?? defaultStorePath }

    /// Opens the store, runs `body` on it and closes it afterwards, also when `body` throws.
    /// `existing` refuses a SQLite path with no file (a query would create an empty one).
    func withStore<T>(existing: Bool, _ body: (any Store) async throws -> T) async throws -> T {
        if let postgres {
            let store = try PostgresStore(url: postgres)
            do {
                let result = try await body(store)
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        }
        let path = store ?? defaultStorePath
        if existing, !FileManager.default.fileExists(atPath: path) {
            throw DepotError(.storage, "no store at \(path); run `airports import --store \(path)` first")
        }
        return try await body(try SQLiteStore(path: path))
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import the bundled CSV into a server store, serve it over HTTP, sync a client store, "
            + "send a partial update across and query (all in a temporary folder).")

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
        abstract: "Import an airports CSV into a store, replacing its airports (all rows or none).")

    @Option(help: "The CSV to import (default: the bundled airports.csv).")
    var csv: String?

    @OptionGroup var target: StoreOptions

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
            let summary = try await target.withStore(existing: false) { store in
                try await AirportImporter.run(csv: url, into: store) { done, total in
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
            }
            write(
                "imported \(summary.rows) airports into \(target.name) in "
                    + String(format: "%.2f", summary.parseSeconds + summary.storeSeconds) + " s")
        } catch {
            throw fail("\(error)")
        }
    }
}

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Query a store; every filter and the order run inside the store.")

    @OptionGroup var source: StoreOptions

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
        if let near, Coordinate(parsing: near) == nil {
            throw ValidationError("--near takes LAT,LON in degrees, e.g. 59.91,10.75 (got '\(near)')")
        }
        if limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    func run() async throws {
        let query = AirportQuery(
            country: country, search: search, near: near.flatMap(Coordinate.init(parsing:)),
            minimumElevation: minimumElevation, limit: limit)
        do {
            let results = try await source.withStore(existing: true) { store in
                try await query.run(on: store.repository(Airport.self))
            }
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

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store's airports over HTTP on 127.0.0.1 until interrupted (Ctrl-C).",
        discussion: """
            GET /airports?country=&q=&near=LAT,LON&min_elevation=&after=&limit=   airports as JSON
            GET /airports/{icao}                                                  one airport, or 404
            PATCH /airports/{icao}    a partial JSON body: absent members unchanged, null clears one
            GET /dataset, GET /changes?since=R                                   what `airports sync` uses
            """)

    @OptionGroup var source: StoreOptions

    @Option(help: "The port on 127.0.0.1 (0: any free port).")
    var port: Int = 8080

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, got \(port)") }
    }

    func run() async throws {
        do {
            let name = source.name
            let port = port
            try await source.withStore(existing: true) { store in
                let count = try await store.repository(Airport.self).count()
                let app = try await AirportsServer.application(store: store, port: port) { bound in
                    write("serving \(count) airports from \(name) on http://127.0.0.1:\(bound) (Ctrl-C stops)")
                }
                try await app.runService()
            }
        } catch {
            throw fail("\(error)")
        }
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a client store up to date from an airports API: everything the first time, "
            + "then only what changed.")

    @Option(help: "The API's base URL, e.g. http://127.0.0.1:8080")
    var from: String

    @OptionGroup var target: StoreOptions

    @Option(help: "Only this country's airports (two-letter code).")
    var country: String?

    func validate() throws {
        guard let url = URL(string: from), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--from takes an http(s) URL, e.g. http://127.0.0.1:8080 (got '\(from)')")
        }
    }

    func run() async throws {
        do {
            guard let base = URL(string: from) else { throw ValidationError("--from: '\(from)' is not a URL") }
            let client = APIClient(baseURL: base)
            let summary = try await target.withStore(existing: false) { store in
                try await AirportsSync.run(client: client, into: store, country: country)
            }
            var line = "\(summary.kind.rawValue) sync from \(from): \(summary.received) "
            line += summary.kind == .full ? "airports" : "changes"
            if summary.removed > 0 { line += ", \(summary.removed) removed" }
            line += " in \(summary.requests) request\(summary.requests == 1 ? "" : "s"), "
            line += String(format: "%.2f s", summary.seconds) + "; revision \(summary.revision), store \(target.name)"
            write(line)
        } catch {
            throw fail("\(error)")
        }
    }
}
