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
