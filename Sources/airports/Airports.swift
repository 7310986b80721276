import AirportsExample
import ArgumentParser
import Depot
import DepotHTTP
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Logging

@main
struct Airports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "airports",
        abstract: "Depot's example: 28,298 real airports, an HTTP API, a syncing client and queries.",
        discussion: """
            EXAMPLES
              airports demo
              airports import --store airports.sqlite
              airports query --near -33.87,151.21 --limit 5
              airports query --country AU --min-elevation -10 --json
              airports serve --port 8080
              airports sync --from http://127.0.0.1:8080 --store client.sqlite
              airports edit --store client.sqlite ENGM --name "Oslo Gardermoen" --iata null
              airports migrate --store airports.sqlite

            ENVIRONMENT
              AIRPORTS_STORE, AIRPORTS_POSTGRES_URL   the store, when --store and --postgres are not given
              AIRPORTS_LOG_LEVEL                      trace (every SQL statement), debug, info, warning (default)

            EXIT CODES
              0  done
              1  the command failed (the message says why: no store, a server that does not answer, …)
              2  the command line is wrong (an unknown flag, a malformed value)
            """,
        subcommands: [Demo.self, Import.self, Serve.self, Sync.self, Edit.self, Query.self, Migrate.self],
        defaultSubcommand: Demo.self)

    /// Parses and runs a command; a usage error exits with 2, a failure with 1 and prints one
    /// sentence (a `DepotError`'s or `HTTPError`'s message, not its debug form).
    static func main() async {
        do {
            let level = try logLevel(quiet: CommandLine.arguments.dropFirst().contains("--quiet"))
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if let sentence = sentence(for: error) {
                // On a terminal, clear a progress bar the failure interrupted.
                let clear = isatty(STDERR_FILENO) == 1 ? "\r\u{1B}[K" : ""
                FileHandle.standardError.write(Data((clear + "error: " + sentence + "\n").utf8))
                Foundation.exit(ExitCode.failure.rawValue)
            }
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(usageExitCode)
            }
            exit(withError: error)
        }
    }

    /// How much Depot and the server log on standard error: `AIRPORTS_LOG_LEVEL` (`trace` shows
    /// every statement with its duration, `debug` transactions, `info` migration steps), else
    /// `warning` (slow statements and failures), so that progress and results stay readable; with
    /// `--quiet`, `error` (nothing but errors, as the flag promises, however slow the machine).
    ///
    /// - Parameter quiet: Whether the command line asks for nothing but errors.
    /// - Throws: A usage error naming the variable when it is set to no level swift-log knows.
    static func logLevel(quiet: Bool = false) throws -> Logger.Level {
        guard let text = environment("AIRPORTS_LOG_LEVEL") else { return quiet ? .error : .warning }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("AIRPORTS_LOG_LEVEL must be one of \(levels), e.g. trace (got '\(text)')")
        }
        return level
    }

    /// What `airports` exits with when its command line is wrong (the argument parser's own default
    /// is 64, `EX_USAGE`).
    static let usageExitCode: Int32 = 2

    /// The sentence a person reads for a failure of Depot or of the API, `nil` for the argument
    /// parser's own errors and exits.
    static func sentence(for error: any Error) -> String? {
        switch error {
        case let error as DepotError: error.message
        case let error as HTTPError: error.description
        case let error as AirportsCSV.Problem: error.description
        default: nil
        }
    }
}

/// The store path used when `--store` is not given.
let defaultStorePath = "airports.sqlite"

func write(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A setting from the environment: `name`'s value, `nil` when unset or empty.
func environment(_ name: String) -> String? {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
    return value
}

/// `--store PATH | --postgres URL`: where a command's airports live; `AIRPORTS_STORE` or
/// `AIRPORTS_POSTGRES_URL` when neither flag is given.
struct StoreOptions: ParsableArguments {
    @Option(help: "The SQLite store (default: $AIRPORTS_STORE, else \(defaultStorePath) in the current folder).")
    var store: String?

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL server instead of SQLite (default: $AIRPORTS_POSTGRES_URL): "
                + "postgres://user:password@host:port/database[?schema=name]"))
    var postgres: String?

    func validate() throws {
        if store != nil, postgres != nil { throw ValidationError("give --store or --postgres, not both") }
        if store == nil, postgres == nil, environment("AIRPORTS_STORE") != nil,
            environment("AIRPORTS_POSTGRES_URL") != nil
        {
            throw ValidationError(
                "AIRPORTS_STORE and AIRPORTS_POSTGRES_URL are both set; unset one, or pass --store or --postgres")
        }
    }

    /// The PostgreSQL URL in force: the flag, else the environment's unless `--store` is given.
    var postgresURL: String? { postgres ?? (store == nil ? environment("AIRPORTS_POSTGRES_URL") : nil) }

    /// The SQLite path in force: the flag, else `AIRPORTS_STORE`, else the default.
    var storePath: String { store ?? environment("AIRPORTS_STORE") ?? defaultStorePath }

    /// What the messages call the store.
    var name: String { postgresURL.map(PostgresStore.Configuration.redacted) ?? storePath }

    /// Opens the store, runs `body` on it and closes it afterwards, also when `body` throws.
    /// `existing` refuses a SQLite path with no file (a query would create an empty one).
    func withStore<T>(existing: Bool, _ body: (any Store) async throws -> T) async throws -> T {
        if let postgres = postgresURL {
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
        let path = storePath
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
        try await AirportsDemo.run(say: write)
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an airports CSV into a store, replacing its airports (all rows or none).")

    @Option(help: "The CSV to import (default: the bundled airports.csv).")
    var csv: String?

    @OptionGroup var target: StoreOptions

    @Flag(help: "Print nothing but errors: no progress, no summary.")
    var quiet = false

    func run() async throws {
        let url: URL
        if let csv {
            url = URL(fileURLWithPath: csv)
        } else if let bundled = AirportsCSV.bundledURL {
            url = bundled
        } else {
            throw DepotError(.storage, "the bundled airports.csv is missing; pass --csv PATH")
        }
        let display = ProgressDisplay(quiet: quiet)
        let summary = try await target.withStore(existing: false) { store in
            let summary = try await AirportImporter.run(csv: url, into: store, progress: display.update)
            // The store is left at the example's latest version, ready for every query (the
            // search index is built over the imported rows at once, faster than row by row).
            if let store = store as? any MigratableStore {
                _ = try await AirportsMigrations.run(on: store, progress: display.update)
            }
            return summary
        }
        display.finish()
        guard !quiet else { return }
        write(
            "imported \(summary.rows) airports into \(target.name) in "
                + String(format: "%.2f", summary.parseSeconds + summary.storeSeconds) + " s")
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a store to the example's latest schema version (or --to N), step by step, "
            + "showing each step that works through rows.")

    @OptionGroup var target: StoreOptions

    @Option(help: "The version to reach (default: the latest, \(AirportsMigrations.all.latestVersion)).")
    var to: Int?

    @Flag(help: "Print nothing but errors: no progress, no summary.")
    var quiet = false

    @Flag(
        help: ArgumentHelp(
            "Change nothing: print the steps that would bring the store's tables to the example's entities, "
                + "as Swift source of the next Migration to review and paste."))
    var propose = false

    func validate() throws {
        if propose, to != nil { throw ValidationError("give --propose or --to, not both") }
        let latest = AirportsMigrations.all.latestVersion
        if let to, !(0...latest).contains(to) {
            throw ValidationError("--to takes a version from 0 to \(latest), e.g. --to \(latest) (got \(to))")
        }
    }

    func run() async throws {
        if propose {
            let source = try await target.withStore(existing: true) { store in
                guard let store = store as? any MigratableStore else {
                    throw DepotError(.migration, "\(target.name) cannot be migrated")
                }
                return try await AirportsMigrations.proposal(for: store)
            }
            write(source)
            return
        }
        let display = ProgressDisplay(quiet: quiet)
        let started = ContinuousClock.now
        let outcome = try await target.withStore(existing: true) { store in
            guard let store = store as? any MigratableStore else {
                throw DepotError(.migration, "\(target.name) cannot be migrated")
            }
            return try await AirportsMigrations.run(on: store, to: to, progress: display.update)
        }
        display.finish()
        guard !quiet else { return }
        guard outcome.from != outcome.to else {
            write("\(target.name) is at version \(outcome.to): nothing to do")
            return
        }
        let seconds = (ContinuousClock.now - started).seconds
        write(
            "migrated \(target.name) from version \(outcome.from) to \(outcome.to) ("
                + outcome.steps.joined(separator: ", ") + ") in " + String(format: "%.2f s", seconds))
    }
}

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

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store's airports over HTTP on 127.0.0.1 until interrupted (Ctrl-C or SIGTERM).",
        discussion: """
            GET /airports?country=&q=&near=LAT,LON&min_elevation=&after=&limit=   airports as JSON
            GET /airports/{icao}                                                  one airport, or 404
            PATCH /airports/{icao}    a partial JSON body: absent members unchanged, null clears one
            GET /feed?cursor=C&limit=N   the change feed `airports sync` pulls (a full copy, then changes)
            POST /airports/{icao}/changes   one pushed edit: {"changes", "base", "edited_at", "delete"}
                                      with an Idempotency-Key header; 409 with the server's airport
                                      when a changed member no longer holds its base value
            GET /dataset, GET /changes?since=R                                   `airports sync --country`
            GET /health               200 when the store answers, else 503

            SIGTERM or SIGINT stops accepting connections, finishes the requests in flight, closes
            the store and exits 0.

            ENVIRONMENT (a flag wins over its variable)
              AIRPORTS_STORE, AIRPORTS_POSTGRES_URL   the store, as --store and --postgres
              AIRPORTS_PORT                           as --port
              AIRPORTS_MAX_CONNECTIONS                as --max-connections
              AIRPORTS_IDLE_TIMEOUT                   as --idle-timeout
            """)

    @OptionGroup var source: StoreOptions

    @Option(
        parsing: .unconditional,
        help: "The port on 127.0.0.1 (0: any free port; default: $AIRPORTS_PORT, else 8080).")
    var port: Int?

    @Option(
        name: .customLong("max-connections"), parsing: .unconditional,
        help: "Connections served at once; more wait (default: $AIRPORTS_MAX_CONNECTIONS, else 256).")
    var maximumConnections: Int?

    @Option(
        name: .customLong("idle-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds an idle connection stays open (default: $AIRPORTS_IDLE_TIMEOUT, else 30).", valueName: "seconds"))
    var idleTimeout: Int?

    /// `flag`'s value, else the environment variable's (which must be a whole number), else `fallback`.
    private func setting(_ flag: Int?, _ variable: String, _ fallback: Int) throws -> Int {
        if let flag { return flag }
        guard let text = environment(variable) else { return fallback }
        guard let value = Int(text) else {
            throw ValidationError("\(variable) must be a whole number, e.g. \(fallback) (got '\(text)')")
        }
        return value
    }

    /// The port and limits in force.
    func settings() throws -> (port: Int, limits: AirportsServer.Limits) {
        let port = try setting(port, "AIRPORTS_PORT", 8080)
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be 0…65535, e.g. --port 8080 (got \(port))")
        }
        var limits = AirportsServer.Limits()
        limits.maximumConnections = try setting(
            maximumConnections, "AIRPORTS_MAX_CONNECTIONS", limits.maximumConnections)
        limits.idleTimeout = .seconds(try setting(idleTimeout, "AIRPORTS_IDLE_TIMEOUT", 30))
        guard limits.maximumConnections > 0 else {
            throw ValidationError("--max-connections must be at least 1 (got \(limits.maximumConnections))")
        }
        guard limits.idleTimeout > .zero else {
            throw ValidationError("--idle-timeout must be at least 1 second (got \(limits.idleTimeout))")
        }
        return (port, limits)
    }

    func validate() throws {
        _ = try settings()
    }

    func run() async throws {
        let name = source.name
        let (port, limits) = try settings()
        try await source.withStore(existing: true) { store in
            let count = try await store.repository(Airport.self).count()
            let app = try await AirportsServer.application(store: store, port: port, limits: limits) { bound in
                write("serving \(count) airports from \(name) on http://127.0.0.1:\(bound) (Ctrl-C stops)")
            }
            // swift-service-lifecycle: SIGTERM and SIGINT end it gracefully.
            try await app.runService()
        }
        write("stopped: the requests in flight were answered and the store is closed")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync a client store with an airports API: push the edits made offline (`airports edit`), then "
            + "pull what changed (everything the first time).",
        discussion: """
            Conflicts (the same member edited here and on the server since this store last synced) are
            resolved field by field, the later edit winning; the result is pushed, so every replica ends
            with it. Edits the server refuses are kept and listed; nothing is retried forever.

            With --country, only that country's airports are copied (GET /changes; no edits are pushed).
            """)

    @Option(help: "The API's base URL, e.g. http://127.0.0.1:8080")
    var from: String

    @OptionGroup var target: StoreOptions

    @Option(help: "Only this country's airports (two-letter code); pulls only, pushes nothing.")
    var country: String?

    @Flag(help: "Print nothing but errors: no progress, no summary.")
    var quiet = false

    @Option(
        name: .customLong("page-size"), parsing: .unconditional,
        help: ArgumentHelp("Airports per feed page, 1…10000 (default 5000).", valueName: "count"))
    var pageSize = 5_000

    func validate() throws {
        guard let url = URL(string: from), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--from takes an http(s) URL, e.g. http://127.0.0.1:8080 (got '\(from)')")
        }
        guard (1...10_000).contains(pageSize) else {
            throw ValidationError("--page-size must be 1…10000, e.g. --page-size 1000 (got \(pageSize))")
        }
    }

    func run() async throws {
        guard let base = URL(string: from) else { throw ValidationError("--from: '\(from)' is not a URL") }
        let client = APIClient(baseURL: base)
        if let country {
            try await countrySync(client: client, country: country)
            return
        }
        let clock = ContinuousClock()
        let started = clock.now
        let (report, status, rejected) = try await target.withStore(existing: false) { store in
            let engine = SyncEngine.airports(store: store, client: client, pageSize: pageSize)
            let report = try await engine.sync()
            return (report, try await engine.status(), try await engine.rejectedChanges())
        }
        guard !quiet else { return }
        var line = "synced with \(from): pushed \(report.pushed) edit\(report.pushed == 1 ? "" : "s")"
        if report.conflicts > 0 {
            line += " (\(report.conflicts) conflict\(report.conflicts == 1 ? "" : "s") resolved)"
        }
        line += ", pulled \(report.pulledRows) airport\(report.pulledRows == 1 ? "" : "s")"
        if report.pulledDeletions > 0 { line += " and \(report.pulledDeletions) deletion(s)" }
        if report.fullCopies > 0 { line += " (a full copy: the store was too far behind)" }
        line += " in \(report.requests) request\(report.requests == 1 ? "" : "s"), "
        line += String(format: "%.2f s", (clock.now - started).seconds) + "; store \(target.name)"
        write(line)
        for change in rejected {
            let icao = change.key.first.map { "\($0.excerpt)" } ?? "?"
            write("refused: edit \(change.sequence) of \(icao): \(change.rejection.map { "\($0)" } ?? "")")
        }
        if status.pendingChanges > 0 { write("\(status.pendingChanges) edit(s) still waiting to be pushed") }
    }

    /// `--country`: the one-way copy of one country through `GET /changes`.
    func countrySync(client: APIClient, country: String) async throws {
        let display = ProgressDisplay(quiet: quiet)
        let summary = try await target.withStore(existing: false) { store in
            try await AirportsSync.run(client: client, into: store, country: country, progress: display.update)
        }
        display.finish()
        guard !quiet else { return }
        var line = "\(summary.kind.rawValue) sync from \(from): \(summary.received) "
        line += summary.kind == .full ? "airports" : "changes"
        if summary.removed > 0 { line += ", \(summary.removed) removed" }
        line += " in \(summary.requests) request\(summary.requests == 1 ? "" : "s"), "
        line += String(format: "%.2f s", summary.seconds) + "; revision \(summary.revision), store \(target.name)"
        write(line)
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit an airport in a client store, offline: stored at once, pushed by the next `airports sync`.",
        discussion: """
            EXAMPLES
              airports edit --store client.sqlite ENGM --name "Oslo Gardermoen"
              airports edit --store client.sqlite ENGM --iata null          (null clears an optional member)
              airports edit --store client.sqlite ENZV --city Sola --elevation 29

            The edit shows in `airports query` at once, marked pending until a sync pushes it.
            """)

    @OptionGroup var target: StoreOptions

    @Argument(help: "The airport's ICAO code, e.g. ENGM.")
    var icao: String

    @Option(help: "A new name.")
    var name: String?

    @Option(help: "A new IATA code, or null to clear it.")
    var iata: String?

    @Option(help: "A new city, or null to clear it.")
    var city: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("A new elevation in feet.", valueName: "feet"))
    var elevation: Double?

    func validate() throws {
        if name == nil, iata == nil, city == nil, elevation == nil {
            throw ValidationError("give at least one of --name, --iata, --city, --elevation")
        }
        if let name, name.trimmingCharacters(in: .whitespaces).isEmpty || name == "null" {
            throw ValidationError("--name cannot be empty or null (an airport always has a name)")
        }
        if let elevation, !elevation.isFinite { throw ValidationError("--elevation must be a number of feet") }
    }

    func run() async throws {
        var assignments: [Assignment<Airport>] = []
        if let name { assignments.append(.set(\.name, to: name)) }
        if let iata { assignments.append(.set(\.iata, to: iata == "null" ? nil : iata)) }
        if let city { assignments.append(.set(\.city, to: city == "null" ? nil : city)) }
        if let elevation { assignments.append(.set(\.elevation, to: elevation)) }
        let key = icao
        let pending = try await target.withStore(existing: true) { store in
            let engine = SyncEngine.airports(store: store, client: nil)
            let updated = try await engine.store.repository(Airport.self).update(
                where: \.icao == key, set: assignments)
            guard updated == 1 else {
                throw DepotError(.invalidQuery, "no airport with icao '\(key)' in \(target.name)", table: "airports")
            }
            return try await engine.status().pendingChanges
        }
        write("edited \(icao) in \(target.name); \(pending) edit(s) waiting for `airports sync`")
    }
}
