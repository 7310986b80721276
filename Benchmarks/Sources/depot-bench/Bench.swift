import BenchHarness
import Depot
@_spi(Benchmarks) import DepotSQLite
import Foundation
import GRDBSQLite

// depot-bench: Depot against the raw SQLite C API, same work, same process, interleaved rounds.
// swift run -c release --package-path Benchmarks depot-bench [--json] [--n 100000]

struct BenchAirport: Entity, Equatable {
    var icao: String
    var iata: String?
    var name: String
    var city: String?
    var country: String
    var elevation: Double
    var latitude: Double
    var longitude: Double

    static let schema = Schema<BenchAirport>("airports", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.iata, "iata")
        Column(\.name, "name")
        Column(\.city, "city")
        Column(\.country, "country")
        Column(\.elevation, "elevation")
        Column(\.latitude, "lat")
        Column(\.longitude, "lon")
    }
}

// MARK: - Data

/// The bundled CSV's airports (RFC 4180: quoted fields, `""` for a quote inside one).
func loadAirports() throws -> [BenchAirport] {
    var base: [BenchAirport] = []
    for fields in try BenchHarness.bundledAirportFields() {
        base.append(
            BenchAirport(
                icao: fields[0], iata: fields[1].isEmpty ? nil : fields[1], name: fields[2],
                city: fields[3].isEmpty ? nil : fields[3], country: fields[5], elevation: Double(fields[6]) ?? 0,
                latitude: Double(fields[7]) ?? 0, longitude: Double(fields[8]) ?? 0))
    }
    return base
}

/// `count` rows: the airports, then copies with distinct keys (`ENGM_1`, …).
func replicate(_ base: [BenchAirport], count: Int) -> [BenchAirport] {
    var rows: [BenchAirport] = []
    rows.reserveCapacity(count)
    var copy = 0
    while rows.count < count {
        for airport in base where rows.count < count {
            var row = airport
            if copy > 0 { row.icao += "_\(copy)" }
            rows.append(row)
        }
        copy += 1
    }
    return rows
}

// MARK: - Raw SQLite baseline

let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Used by one task at a time (a connection opened `NOMUTEX`).
final class RawDatabase: @unchecked Sendable {
    var handle: OpaquePointer?

    init(path: String) {
        sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        execute("PRAGMA journal_mode = WAL")
        execute("PRAGMA synchronous = NORMAL")
        execute(
            "CREATE TABLE IF NOT EXISTS \"airports\" (\"icao\" TEXT NOT NULL, \"iata\" TEXT, \"name\" TEXT NOT NULL, "
                + "\"city\" TEXT, \"country\" TEXT NOT NULL, \"elevation\" REAL NOT NULL, \"lat\" REAL NOT NULL, "
                + "\"lon\" REAL NOT NULL, PRIMARY KEY (\"icao\"))")
    }

    deinit { sqlite3_close_v2(handle) }

    /// Registers `depot_fold(text)` on this connection, as SQLiteStore does (the same folding), so
    /// the search baseline runs the same SQL.
    func registerFold() {
        let fold: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
            context, _, arguments in
            guard let value = arguments?[0], let text = sqlite3_value_text(value) else {
                sqlite3_result_null(context)
                return
            }
            TextFolding.fold(String(cString: text)).withCString {
                sqlite3_result_text(context, $0, -1, transient)
            }
        }
        sqlite3_create_function_v2(
            handle, "depot_fold", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, fold, nil, nil, nil)
    }

    /// Registers `depot_distance(lat0, lon0, lat, lon)` on this connection, as SQLiteStore does
    /// (the same haversine), so the nearest baseline runs the same SQL.
    func registerDistance() {
        let distance: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
            context, _, arguments in
            guard let arguments, (0..<4).allSatisfy({ sqlite3_value_type(arguments[$0]) != SQLITE_NULL }) else {
                sqlite3_result_null(context)
                return
            }
            sqlite3_result_double(
                context,
                GeoDistance.haversineKilometers(
                    latitude1: sqlite3_value_double(arguments[0]), longitude1: sqlite3_value_double(arguments[1]),
                    latitude2: sqlite3_value_double(arguments[2]), longitude2: sqlite3_value_double(arguments[3])))
        }
        sqlite3_create_function_v2(
            handle, "depot_distance", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, distance, nil, nil, nil)
    }

    /// A connection with Depot's SQL functions registered, as SQLiteStore registers them.
    static func withDepotFunctions(path: String) -> RawDatabase {
        let database = RawDatabase(path: path)
        database.registerFold()
        database.registerDistance()
        precondition(database.handle.map(SQLiteSearchTokenizer.register(on:)) == true, "SQLite here has no FTS5")
        return database
    }

    /// The columns every baseline query reads, in schema order.
    static let selectAll =
        "SELECT \"icao\", \"iata\", \"name\", \"city\", \"country\", \"elevation\", \"lat\", \"lon\" FROM \"airports\""

    /// `DELETE … WHERE country = ?`, as one statement.
    func deleteCountry(_ country: String) {
        let delete = prepare("DELETE FROM \"airports\" WHERE \"country\" = ?")
        Self.bind(delete, 1, country)
        sqlite3_step(delete)
        sqlite3_finalize(delete)
    }

    func execute(_ sql: String) {
        sqlite3_exec(handle, sql, nil, nil, nil)
    }

    func prepare(_ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        return statement
    }

    static func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: String?) {
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), transient)
            }
        }
    }

    /// The rows in one transaction.
    func write(_ rows: [BenchAirport], upsert: Bool) {
        execute("BEGIN IMMEDIATE")
        writeRows(rows, upsert: upsert)
        execute("COMMIT")
    }

    /// `name` and `elevation` of every row updated by key (the patch case's baseline), in one
    /// transaction: `name + "!"`, `elevation + 2`.
    func patch(_ rows: [BenchAirport]) {
        execute("BEGIN IMMEDIATE")
        let statement = prepare("UPDATE \"airports\" SET \"name\" = ?2, \"elevation\" = ?3 WHERE \"icao\" = ?1")
        for row in rows {
            Self.bind(statement, 1, row.icao)
            Self.bind(statement, 2, row.name + "!")
            sqlite3_bind_double(statement, 3, row.elevation + 2)
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        execute("COMMIT")
    }

    /// The rows through one prepared statement, inside the caller's transaction.
    func writeRows(_ rows: [BenchAirport], upsert: Bool) {
        var sql =
            "INSERT INTO \"airports\" (\"icao\", \"iata\", \"name\", \"city\", \"country\", \"elevation\", \"lat\", \"lon\") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        if upsert {
            sql +=
                " ON CONFLICT (\"icao\") DO UPDATE SET \"iata\" = excluded.\"iata\", \"name\" = excluded.\"name\", \"city\" = excluded.\"city\", \"country\" = excluded.\"country\", \"elevation\" = excluded.\"elevation\", \"lat\" = excluded.\"lat\", \"lon\" = excluded.\"lon\""
        }
        let statement = prepare(sql)
        for row in rows {
            Self.bind(statement, 1, row.icao)
            Self.bind(statement, 2, row.iata)
            Self.bind(statement, 3, row.name)
            Self.bind(statement, 4, row.city)
            Self.bind(statement, 5, row.country)
            sqlite3_bind_double(statement, 6, row.elevation)
            sqlite3_bind_double(statement, 7, row.latitude)
            sqlite3_bind_double(statement, 8, row.longitude)
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
    }

    static func text(_ statement: OpaquePointer?, _ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, index) else { return nil }
        return String(cString: pointer)
    }

    /// The rows `sql` selects, `arguments` bound first, then `doubles`.
    func fetch(_ sql: String, _ arguments: [String] = [], doubles: [Double] = []) -> [BenchAirport] {
        let statement = prepare(sql)
        for (index, argument) in arguments.enumerated() { Self.bind(statement, Int32(index + 1), argument) }
        for (index, number) in doubles.enumerated() {
            sqlite3_bind_double(statement, Int32(arguments.count + index + 1), number)
        }
        var rows: [BenchAirport] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                BenchAirport(
                    icao: Self.text(statement, 0) ?? "", iata: Self.text(statement, 1),
                    name: Self.text(statement, 2) ?? "",
                    city: Self.text(statement, 3), country: Self.text(statement, 4) ?? "",
                    elevation: sqlite3_column_double(statement, 5), latitude: sqlite3_column_double(statement, 6),
                    longitude: sqlite3_column_double(statement, 7)))
        }
        sqlite3_finalize(statement)
        return rows
    }

    func count(_ sql: String, _ arguments: [String]) -> Int {
        let statement = prepare(sql)
        for (index, argument) in arguments.enumerated() { Self.bind(statement, Int32(index + 1), argument) }
        sqlite3_step(statement)
        let count = Int(sqlite3_column_int64(statement, 0))
        sqlite3_finalize(statement)
        return count
    }
}

// MARK: - Harness

typealias Result = BenchResult

func scratchPath() -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-bench-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("bench.sqlite").path
}

func removeDatabase(_ path: String) {
    try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
}

/// `--only NAME` runs the cases whose name contains NAME (for profiling one case); with
/// `--exact`, only the case named exactly NAME.
let onlyCase: String? = BenchHarness.option("--only")
let onlyExact = CommandLine.arguments.contains("--exact")

/// Whether the case `name` runs, given `--only` and `--exact`.
func selected(_ name: String) -> Bool {
    guard let onlyCase else { return true }
    return onlyExact ? name == onlyCase : name.contains(onlyCase)
}

/// Runs subject, baseline and the baseline again alternately (`BenchHarness.compareWithFloor`):
/// one warm-up round, then `rounds` timed rounds; the result carries the A/A floor. `prepare`
/// builds a fresh database for a round; only the work is timed.
@MainActor
func compare(
    _ name: String, n: Int, rounds: Int = BenchHarness.defaultRounds, subjectName: String = "depot",
    subject: @escaping (String) async throws -> Void,
    subjectPrepare: @escaping (String) async throws -> Void = { _ in },
    baseline: @escaping (String) -> Void, baselinePrepare: @escaping (String) async throws -> Void = { _ in }
) async throws -> Result? {
    try await compare(
        name, n: n, rounds: rounds, subjectName: subjectName, subjectPrepare: subjectPrepare,
        openSubject: { $0 }, subject: subject,
        baselinePrepare: baselinePrepare, openBaseline: { $0 }, baseline: baseline)
}

/// ``compare(_:n:rounds:subjectName:subject:subjectPrepare:baseline:baselinePrepare:)`` with each
/// side's database opened before the clock starts (`openSubject`, `openBaseline`, after
/// `prepare`): what is timed is the work on an open connection — for Depot, still its first query
/// on the store, with the one-time table check.
@MainActor
func compare<Subject: Sendable, Baseline>(
    _ name: String, n: Int, rounds: Int = BenchHarness.defaultRounds, subjectName: String = "depot",
    subjectPrepare: @escaping (String) async throws -> Void = { _ in },
    openSubject: @escaping (String) async throws -> Subject,
    subject: @escaping (Subject) async throws -> Void,
    baselinePrepare: @escaping (String) async throws -> Void = { _ in },
    openBaseline: @escaping (String) -> Baseline,
    baseline: @escaping (Baseline) -> Void
) async throws -> Result? {
    if !selected(name) { return nil }
    let medians = try await BenchHarness.compareWithFloor(
        rounds: rounds,
        subject: {
            let path = scratchPath()
            defer { removeDatabase(path) }
            try await subjectPrepare(path)
            let opened = try await openSubject(path)
            return try await BenchHarness.time { try await subject(opened) }
        },
        baseline: {
            let path = scratchPath()
            defer { removeDatabase(path) }
            try await baselinePrepare(path)
            let opened = openBaseline(path)
            return await BenchHarness.time { baseline(opened) }
        })
    var result = Result(
        case: name, backend: "sqlite", n: n, subject: subjectName, medianMilliseconds: medians.subject,
        baseline: "raw-c", baselineMedianMilliseconds: medians.baseline)
    result.floor = medians.floor
    return result
}

/// Opens the benchmark's repository on a Depot file store.
func openDepot(_ path: String) throws -> Repository<BenchAirport> {
    try SQLiteStore(path: path).repository(BenchAirport.self)
}

extension Array where Element == Result {
    mutating func appendIfPresent(_ result: Result?) {
        if let result { append(result) }
    }
}

// MARK: - Cases

@main
struct DepotBench {
    static func main() async throws {

        let arguments = CommandLine.arguments
        if arguments.contains("--memory-probe") { return try await MemoryCases.probe(arguments) }
        if arguments.contains("--profile") { return try await MemoryCases.profile(arguments) }
        if arguments.contains("--profile-entity") { return try await MacroCases.profile(arguments) }
        let json = arguments.contains("--json")
        let sizes: [Int] =
            BenchHarness.intOption("--n").map { [$0] } ?? [10_000, 100_000]

        // PostgreSQL joins when a server is configured (`--postgres URL` or DEPOT_POSTGRES_URL).
        let postgresURL =
            BenchHarness.option("--postgres")
            ?? ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"]
        if arguments.contains("--postgres-scale") {
            guard let postgresURL else {
                print("--postgres-scale needs --postgres URL or DEPOT_POSTGRES_URL")
                exit(64)
            }
            let postgres = try await PostgresCases.open(url: postgresURL)
            if !json { printHeader() }
            try await postgres.runScale(n: BenchHarness.intOption("--n") ?? 1_000_000, base: try loadAirports()) {
                result in
                if json { try? BenchHarness.writeJSONLines([result]) } else { printResult(result) }
            }
            await postgres.close()
            return
        }
        var postgres: PostgresCases?
        if let postgresURL { postgres = try await PostgresCases.open(url: postgresURL) }
        if postgres == nil, !json {
            print("(PostgreSQL cases skipped: no --postgres URL and DEPOT_POSTGRES_URL is not set)\n")
        }

        var results: [Result] = []
        let airports = try loadAirports()
        for n in sizes {
            let rows = replicate(airports, count: n)
            let updated = rows.map { row -> BenchAirport in
                var copy = row
                copy.elevation += 1
                copy.name += " (updated)"
                return copy
            }
            func seedDepot(_ path: String) async throws {
                try await SQLiteStore(path: path).repository(BenchAirport.self).insert(rows)
            }
            func seedRaw(_ path: String) { RawDatabase(path: path).write(rows, upsert: false) }
            let nearPoint = Coordinate(latitude: 59.91, longitude: 10.75)
            let selectAll = RawDatabase.selectAll + " ORDER BY \"icao\""
            let opened = (openSubject: openDepot, openBaseline: RawDatabase.init(path:))

            results.appendIfPresent(
                try await compare(
                    "insert", n: n, openSubject: opened.openSubject, subject: { try await $0.insert(rows) },
                    openBaseline: opened.openBaseline, baseline: { $0.write(rows, upsert: false) }))
            results.appendIfPresent(
                try await compare(
                    "upsert over existing", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { try await $0.upsert(updated) },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: { $0.write(updated, upsert: true) }))
            results.appendIfPresent(
                try await compare(
                    "fetch all", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { _ = try await $0.fetchAll() },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: { _ = $0.fetch(selectAll) }))
            results.appendIfPresent(
                try await compare(
                    "fetch country == US", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { _ = try await $0.fetch(where: \.country == "US") },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: {
                        _ = $0.fetch(RawDatabase.selectAll + " WHERE \"country\" = ? ORDER BY \"icao\"", ["US"])
                    }))
            results.appendIfPresent(
                try await compare(
                    "count country == US", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { _ = try await $0.count(where: \.country == "US") },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: { _ = $0.count("SELECT COUNT(*) FROM \"airports\" WHERE \"country\" = ?", ["US"]) }))
            let patches = rows.map {
                Patch<BenchAirport>(key: $0.icao).set(\.name, $0.name + "!").set(\.elevation, $0.elevation + 2)
            }
            results.appendIfPresent(
                try await compare(
                    "patch-upsert 2 of 8", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { try await $0.apply(patches) },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: { $0.patch(rows) }))
            let norwegian = updated.filter { $0.country == "NO" }
            results.appendIfPresent(
                try await compare(
                    "replace country == NO", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { try await $0.replace(where: \.country == "NO", with: norwegian) },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: { database in
                        // One transaction, as Depot's replace: delete, then upsert the new rows.
                        database.execute("BEGIN IMMEDIATE")
                        database.deleteCountry("NO")
                        database.writeRows(norwegian, upsert: true)
                        database.execute("COMMIT")
                    }))
            results.appendIfPresent(
                try await compare(
                    "remove country == US", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: { _ = try await $0.remove(where: \.country == "US") },
                    baselinePrepare: seedRaw, openBaseline: opened.openBaseline,
                    baseline: { $0.deleteCountry("US") }))
            results.appendIfPresent(
                try await compare(
                    "nearest 5", n: n, subjectPrepare: seedDepot, openSubject: opened.openSubject,
                    subject: {
                        _ = try await $0.fetch(
                            orderBy: [.nearest(to: nearPoint, latitude: \.latitude, longitude: \.longitude)], limit: 5)
                    },
                    baselinePrepare: seedRaw,
                    // The same SQL Depot runs, with the same functions registered.
                    openBaseline: RawDatabase.withDepotFunctions,
                    baseline: {
                        let nearest = $0.fetch(
                            RawDatabase.selectAll
                                + " ORDER BY depot_distance(?, ?, \"lat\", \"lon\") NULLS LAST, \"icao\" LIMIT 5",
                            doubles: [nearPoint.latitude, nearPoint.longitude])
                        precondition(nearest.count == 5)
                    }))
            results.appendIfPresent(
                try await compare(
                    "search name ~ \"field\" any case", n: n, subjectPrepare: seedDepot,
                    openSubject: opened.openSubject,
                    subject: { _ = try await $0.fetch(where: .contains(\.name, "FIELD", .caseInsensitive)) },
                    baselinePrepare: seedRaw,
                    // The same SQL Depot runs, with the same functions registered.
                    openBaseline: RawDatabase.withDepotFunctions,
                    baseline: {
                        _ = $0.fetch(
                            RawDatabase.selectAll + " WHERE instr(depot_fold(\"name\"), ?) > 0 ORDER BY \"icao\"",
                            [TextFolding.fold("FIELD")])
                    }))
            results += try await MacroCases.run(n: n, rows: rows)
            results += try await GeoCases.run(n: n, base: airports)
            results += try await SearchCases.run(n: n, base: airports)
            results += try await ObservationCases.run(n: n, rows: rows)
            results += try await RelationCases.run(parents: n / 10, childrenPerParent: 10)
            results += try await MemoryCases.run(n: n, rows: rows)
            results += try await InstrumentationCases.run(n: n, rows: rows)
            results += try await GRDBCases.run(n: n, rows: rows, updated: updated)
            results += try await FluentCases.run(n: n, rows: rows)
            if let postgres {
                results += try await postgres.run(n: n, rows: rows, updated: updated)
                results += try await postgres.runSearch(n: n, base: airports)
            }
        }
        // One size: a migration step over a million rows (time and resident memory).
        results += try await MigrationCases.run(rows: 1_000_000, rounds: BenchHarness.defaultRounds)
        await postgres?.close()

        if json {
            try BenchHarness.writeJSONLines(results)
        } else {
            printHeader()
            for result in results { printResult(result) }
        }
    }
}

func printHeader() {
    print(
        "case".padding(toLength: 44, withPad: " ", startingAt: 0)
            + "n        baseline         subject ms base ms    ratio  A/A floor")
}

/// One result as a row of the table.
func printResult(_ result: BenchResult) {
    // Times under 10 ms (the indexed geo cases) keep three decimals, ratios under 0.1 four.
    func milliseconds(_ value: Double) -> String {
        String(format: value < 10 ? "%.3f" : "%.1f", value).padding(toLength: 11, withPad: " ", startingAt: 0)
    }
    print(
        result.case.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(result.n).padding(toLength: 9, withPad: " ", startingAt: 0)
            + result.baseline.padding(toLength: 17, withPad: " ", startingAt: 0)
            + milliseconds(result.medianMilliseconds) + milliseconds(result.baselineMedianMilliseconds)
            + String(format: result.ratio < 0.1 ? "%.4f×" : "%.2f×", result.ratio) + result.floorNote)
}
