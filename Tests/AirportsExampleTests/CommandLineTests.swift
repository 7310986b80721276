import AirportsExample
import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// The built `airports` binary, run as a person would run it: what it accepts, what it answers and
/// how it fails.
@Suite("airports command line", .timeLimit(.minutes(10)))
struct CommandLineTests {
    /// One imported store file for the suite's queries (they change nothing), imported by the
    /// binary itself: parsing 28,298 rows in this process would hold a thread of the cooperative
    /// pool the other suites need.
    static let storePath = Task { () throws -> String in
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("airports.sqlite").path
        let imported = try await runProcess(try airportsBinary(), ["import", "--quiet", "--store", path])
        try #require(imported.status == 0, "\(imported.errors)")
        return path
    }

    /// Runs `airports query --store <the suite's store> <arguments> --json`.
    static func query(_ arguments: [String]) async throws -> (status: Int32, rows: [[String: Any]], errors: String) {
        let path = try await storePath.value
        let run = try await runProcess(try airportsBinary(), ["query", "--store", path] + arguments + ["--json"])
        let rows = (try? JSONSerialization.jsonObject(with: Data(run.output.utf8))) as? [[String: Any]] ?? []
        return (run.status, rows, run.errors)
    }

    @Test("a negative latitude or longitude after --near is a value, and the answer matches a haversine over the CSV")
    func negativeCoordinates() async throws {
        // Seeded: southern and western points, written the ways people type them.
        var random = SplitMix64(state: 0x5EED_0026)
        var points: [(Double, Double)] = [(-33.8688, 151.2093), (40.6413, -73.7781), (-22.9068, -43.1729)]
        for _ in 0..<9 {
            points.append((Double.random(in: -89...0, using: &random), Double.random(in: -179...179, using: &random)))
        }
        for (latitude, longitude) in points {
            let text = String(format: "%.4f,%.4f", latitude, longitude)
            let answer = try await Self.query(["--near", text, "--limit", "5"])
            #expect(answer.status == 0, "--near \(text): \(answer.errors)")
            let reference = referenceNearest(
                Double(String(format: "%.4f", latitude)) ?? 0, Double(String(format: "%.4f", longitude)) ?? 0, limit: 5)
            #expect(answer.rows.compactMap { $0["icao"] as? String } == reference.map(\.icao), "--near \(text)")
        }
    }

    @Test("a store import creates is at the latest version: search answers at once, no migrate needed")
    func importedStoreSearches() async throws {
        let found = try await Self.query(["--search", "osl gard"])
        #expect(found.status == 0, "\(found.errors)")
        #expect(found.rows.contains { $0["icao"] as? String == "ENGM" }, "\(found.rows)")
        let path = try await Self.storePath.value
        let store = try SQLiteStore(path: path)
        #expect(try await store.appliedMigrations().count == AirportsMigrations.all.latestVersion)
    }

    @Test("a negative --min-elevation is a value: the airports at or above it, as the CSV says")
    func negativeElevation() async throws {
        for (elevation, country) in [(-100.0, "NL"), (-1_000.0, "IL"), (-5.5, "AU")] {
            let answer = try await Self.query([
                "--min-elevation", String(elevation), "--country", country, "--limit", "10000",
            ])
            #expect(answer.status == 0, "\(answer.errors)")
            let expected = bundledAirports.filter { $0.country == country && $0.elevation >= elevation }
                .map(\.icao).sorted(by: icaoOrder)
            #expect(answer.rows.compactMap { $0["icao"] as? String } == expected, "--min-elevation \(elevation)")
            #expect(!expected.isEmpty)
        }
    }

    @Test(
        "a malformed value or an unknown flag exits 2 with a message naming the flag and an example",
        arguments: [
            (["--near", "north"], ["--near", "e.g. -33.87,151.21"]),
            (["--near", "-91,10"], ["--near", "-90…90"]),
            (["--near"], ["--near"]),
            (["--min-elevation", "high"], ["--min-elevation", "e.g. 1000 or -100"]),
            (["--limit", "ten"], ["--limit", "e.g. 5"]),
            (["--limit", "-1"], ["--limit must not be negative", "e.g. --limit 5"]),
            (["--bogus"], ["--bogus"]),
        ])
    func usageErrors(arguments: [String], mentions: [String]) async throws {
        let answer = try await Self.query(arguments)
        #expect(answer.status == 2, "\(arguments): \(answer.errors)")
        for mention in mentions {
            #expect(answer.errors.contains(mention), "\(arguments): \(answer.errors)")
        }
    }

    @Test("a port outside 0…65535 is a usage error (2), also when negative")
    func badPort() async throws {
        let path = try await Self.storePath.value
        for port in ["70000", "-1"] {
            let answer = try await runProcess(try airportsBinary(), ["serve", "--store", path, "--port", port])
            #expect(answer.status == 2, "\(port): \(answer.errors)")
            #expect(answer.errors.contains("--port must be 0…65535"), "\(answer.errors)")
        }
    }

    @Test(
        "serve's limits must be positive: --max-connections and --idle-timeout below 1 are usage errors (2)",
        arguments: [
            (["--max-connections", "0"], "--max-connections must be at least 1 (got 0)"),
            (["--idle-timeout", "-5"], "--idle-timeout must be at least 1 second"),
        ])
    func badLimits(arguments: [String], message: String) async throws {
        let path = try await Self.storePath.value
        let answer = try await runProcess(try airportsBinary(), ["serve", "--store", path] + arguments)
        #expect(answer.status == 2, "\(arguments): \(answer.errors)")
        #expect(answer.errors.contains(message), "\(answer.errors)")
    }

    @Test("a failure exits 1 and prints one sentence, the error's message, not its debug form")
    func failureIsASentence() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID().uuidString).sqlite")
        let answer = try await runProcess(try airportsBinary(), ["query", "--store", missing.path])
        #expect(answer.status == 1)
        #expect(
            answer.errors == "error: no store at \(missing.path); run `airports import --store \(missing.path)` first\n"
        )
        let unreachable = try await runProcess(
            try airportsBinary(), ["sync", "--from", "http://127.0.0.1:9", "--store", missing.path])
        #expect(unreachable.status == 1)
        #expect(unreachable.errors.hasPrefix("error: GET /sync/airports/feed: "), "\(unreachable.errors)")
        #expect(!unreachable.errors.contains("HTTPError("), "\(unreachable.errors)")
    }

    @Test("import on a terminal draws a bar that ends in each phase's total; piped, plain lines; --quiet, nothing")
    func importProgress() async throws {
        let binary = try airportsBinary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A pseudo-terminal through script(1): what a person at a terminal sees.
        let command = "'\(binary.path)' import --store '\(folder.path)/tty.sqlite'"
        let tty = try await runProcess(URL(fileURLWithPath: "/usr/bin/script"), ["-qefc", command, "/dev/null"])
        #expect(tty.status == 0, "\(tty.errors)")
        #expect(tty.output.contains("\rparsing ["), "\(tty.output)")
        #expect(tty.output.contains("\rparsing: 28,298 rows in "), "\(tty.output)")
        #expect(tty.output.contains("\rstoring: 28,298 airports in "), "\(tty.output)")
        #expect(tty.output.contains("imported 28298 airports"), "\(tty.output)")

        let piped = try await runProcess(binary, ["import", "--store", folder.path + "/piped.sqlite"])
        #expect(piped.status == 0)
        #expect(piped.errors.contains("parsing: 28,298 rows in "), "\(piped.errors)")
        #expect(piped.errors.contains("storing: 28,298 airports in "), "\(piped.errors)")
        #expect(!piped.errors.contains("\r") && !piped.errors.contains("\u{1B}"), "\(piped.errors)")
        #expect(piped.output.hasPrefix("imported 28298 airports"), "progress stays off standard output")

        let quiet = try await runProcess(binary, ["import", "--quiet", "--store", folder.path + "/quiet.sqlite"])
        #expect(quiet.status == 0)
        #expect(quiet.output.isEmpty && quiet.errors.isEmpty, "\(quiet.output)\(quiet.errors)")
    }

    @Test(
        "import brings a new store to the latest version with a progress bar on a terminal, tidies the names the CSV spaced oddly, and migrate then has nothing to do"
    )
    func migrateWithProgress() async throws {
        let binary = try airportsBinary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tty = folder.appendingPathComponent("tty.sqlite").path
        let piped = folder.appendingPathComponent("piped.sqlite").path

        // import runs the example's migrations after the rows are in, each step that works
        // through rows shown as a phase of its own.
        let terminal = try await runProcess(
            URL(fileURLWithPath: "/usr/bin/script"),
            ["-qefc", "'\(binary.path)' import --store '\(tty)'", "/dev/null"])
        #expect(terminal.status == 0, "\(terminal.errors)")
        #expect(terminal.output.contains("\r2 tidy names ["), "\(terminal.output)")
        #expect(terminal.output.contains("\r2 tidy names: 28,298 airports in "), "\(terminal.output)")

        let lines = try await runProcess(binary, ["import", "--store", piped])
        #expect(lines.status == 0, "\(lines.errors)")
        #expect(lines.errors.contains("2 tidy names: 28,298 airports in "), "\(lines.errors)")
        #expect(!lines.errors.contains("\r") && !lines.errors.contains("\u{1B}"), "\(lines.errors)")
        #expect(!lines.errors.contains("migration step"), "the store's info lines stay off by default: \(lines.errors)")

        // The 15 oddly spaced names and cities of the CSV, tidied; every other row as imported.
        let store = try SQLiteStore(path: piped)
        let airports = try await store.repository(Airport.self).fetchAll()
        #expect(airports.count == 28_298)
        #expect(airports.first { $0.icao == "LOXT" }?.name == "Brumowski Air Base")
        #expect(airports.first { $0.icao == "EPGI" }?.name == "Grudziądz-Lisie Kąty Airport")
        #expect(airports.first { $0.icao == "LIRJ" }?.city == "Marina Di Campo")
        let byCode = Dictionary(uniqueKeysWithValues: bundledAirports.map { ($0.icao, $0) })
        let changed = airports.filter { $0 != byCode[$0.icao] }.map(\.icao).sorted()
        let spaced = bundledAirports.filter { airport in
            [airport.name, airport.city ?? ""].contains {
                $0 != $0.trimmingCharacters(in: .whitespaces) || $0.contains("  ")
            }
        }.map(\.icao).sorted()
        #expect(changed == spaced)
        #expect(spaced.count == 15)

        let again = try await runProcess(binary, ["migrate", "--store", piped])
        #expect(again.status == 0)
        #expect(again.output == "\(piped) is at version 4: nothing to do\n", "\(again.output)")
        let down = try await runProcess(binary, ["migrate", "--store", piped, "--to", "1"])
        #expect(down.status == 1)
        #expect(down.errors.contains("irreversible"), "\(down.errors)")
        let wrong = try await runProcess(binary, ["migrate", "--store", piped, "--to", "7"])
        #expect(wrong.status == 2)
        #expect(wrong.errors.contains("--to takes a version from 0 to 4"), "\(wrong.errors)")
    }

    @Test("migrate --propose prints the next step as Swift source and changes nothing; a store that fits gets none")
    func migratePropose() async throws {
        let binary = try airportsBinary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("propose-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("airports.sqlite").path
        let store = try SQLiteStore(path: path)
        try await store.migrate(AirportsMigrations.all)
        let fits = try await runProcess(binary, ["migrate", "--propose", "--store", path])
        #expect(fits.status == 0, "\(fits.errors)")
        #expect(fits.output == "// The database matches the entities: nothing to migrate.\n", "\(fits.output)")

        // A database whose `lid` column a later version of the app dropped.
        let dropped = Migration("5 no local codes", [.dropColumn("lid", from: "airports")])
        try await store.migrate(Migrations(AirportsMigrations.all.steps + [dropped]))
        let proposal = try await runProcess(binary, ["migrate", "--propose", "--store", path])
        #expect(proposal.status == 0, "\(proposal.errors)")
        #expect(
            proposal.output == """
                Migration("6 …", [
                    .addColumn("lid", .text, nullable: true, to: "airports"),
                ])

                """, "\(proposal.output)")
        #expect(try await store.appliedMigrations().count == 5, "--propose changed nothing")
        let both = try await runProcess(binary, ["migrate", "--propose", "--to", "2", "--store", path])
        #expect(both.status == 2)
    }

    @Test(
        "AIRPORTS_LOG_LEVEL=trace shows every statement Depot sends, with its duration, on standard error; a level swift-log does not know is a usage error naming the variable"
    )
    func traceLog() async throws {
        let path = try await Self.storePath.value
        let traced = try await runProcess(
            try airportsBinary(), ["query", "--store", path, "--country", "NO", "--limit", "1"],
            environment: ["AIRPORTS_LOG_LEVEL": "trace"])
        #expect(traced.status == 0, "\(traced.errors)")
        #expect(traced.errors.contains("SELECT"), "\(traced.errors)")
        #expect(traced.errors.contains("duration_ms="), "\(traced.errors)")
        #expect(
            traced.errors.contains("[1 value redacted]") || traced.errors.contains("values redacted]"),
            "\(traced.errors)")
        let plain = try await runProcess(
            try airportsBinary(), ["query", "--store", path, "--country", "NO", "--limit", "1"])
        #expect(plain.status == 0)
        #expect(!plain.errors.contains("SELECT"), "\(plain.errors)")
        let loud = try await runProcess(
            try airportsBinary(), ["query", "--store", path, "--limit", "1"],
            environment: ["AIRPORTS_LOG_LEVEL": "loud"])
        #expect(loud.status == 2)
        #expect(loud.errors.contains("AIRPORTS_LOG_LEVEL must be one of trace, debug"), "\(loud.errors)")
        #expect(loud.errors.contains("(got 'loud')"), "\(loud.errors)")
    }

    @Test("serve takes its settings from the environment, answers /health, and stops cleanly on SIGTERM")
    func serveAsAService() async throws {
        let path = try await Self.storePath.value
        let (server, reader, banner) = try await startServe(
            [], environment: ["AIRPORTS_STORE": path, "AIRPORTS_PORT": "0", "AIRPORTS_MAX_CONNECTIONS": "4"])
        #expect(banner.hasPrefix("serving 28298 airports from \(path) on http://127.0.0.1:"), "\(banner)")
        let address = try #require(banner.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") })
        let health = try await RawHTTP.send("GET", try #require(URL(string: address + "/health")))
        #expect(health.status == 200)
        #expect(health.object["status"] as? String == "ok")

        kill(server.processIdentifier, SIGTERM)
        let rest = try await offPool {
            let rest = reader.readDataToEndOfFile()
            server.waitUntilExit()
            return String(decoding: rest, as: UTF8.self)
        }
        #expect(server.terminationStatus == 0)
        #expect(rest.contains("stopped: the requests in flight were answered and the store is closed"), "\(rest)")
    }

    @Test("a malformed setting in the environment is a usage error naming the variable")
    func badEnvironment() async throws {
        let path = try await Self.storePath.value
        let answer = try await runProcess(
            try airportsBinary(), ["serve", "--store", path], environment: ["AIRPORTS_PORT": "eighty"])
        #expect(answer.status == 2)
        #expect(
            answer.errors.contains("AIRPORTS_PORT must be a whole number, e.g. 8080 (got 'eighty')"), "\(answer.errors)"
        )
        let both = try await runProcess(
            try airportsBinary(), ["query"],
            environment: ["AIRPORTS_STORE": path, "AIRPORTS_POSTGRES_URL": "postgres://x@h/d"])
        #expect(both.status == 2)
        #expect(both.errors.contains("AIRPORTS_STORE and AIRPORTS_POSTGRES_URL are both set"), "\(both.errors)")
        let fromEnvironment = try await runProcess(
            try airportsBinary(), ["query", "--country", "NO", "--limit", "1", "--json"],
            environment: ["AIRPORTS_STORE": path])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.errors)")
        #expect(fromEnvironment.output.contains("\"country\":\"NO\""), "\(fromEnvironment.output)")
    }

    @Test("--help shows examples and the exit codes; a subcommand's help shows a negative coordinate")
    func help() async throws {
        let top = try await runProcess(try airportsBinary(), ["--help"])
        #expect(top.status == 0)
        #expect(top.output.contains("EXAMPLES") && top.output.contains("EXIT CODES"), "\(top.output)")
        let query = try await runProcess(try airportsBinary(), ["query", "--help"])
        #expect(query.status == 0)
        #expect(query.output.contains("--near -33.87,151.21"), "\(query.output)")
    }
}
