import BenchHarness
import Depot
import DepotSQL
import DepotSQLite
import Foundation
import GRDBSQLite

// Geo through an index (issue #27 item 6): `nearest` and `within` on a store with an index on
// (lat, lon), against Depot's full scan (the nearest order over every row; the same filter on a
// store without the index) and against raw C SQLite running the same bounding-box SQL by hand on
// an indexed table. The rows are the bundled airports, then jittered copies of them (see
// `GeoCases.rows`), so they keep the airports' spread over the globe. Each query point is its own
// result: Oslo, Fiji across the antimeridian, and Dallas (among the densest areas of the file).
// The three databases are seeded once per size and stay open; rounds alternate the sides, and
// every answer is checked against the others'.

/// SplitMix64: a small generator with a fixed seed, so every run makes the same rows.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

extension RawDatabase {
    /// `SELECT COUNT(*) …` with `doubles` bound.
    func count(_ sql: String, doubles: [Double]) -> Int {
        let statement = prepare(sql)
        for (index, number) in doubles.enumerated() { sqlite3_bind_double(statement, Int32(index + 1), number) }
        sqlite3_step(statement)
        let count = Int(sqlite3_column_int64(statement, 0))
        sqlite3_finalize(statement)
        return count
    }

    /// What `EXPLAIN QUERY PLAN` says of `sql` (its detail lines), `doubles` bound.
    func queryPlan(_ sql: String, doubles: [Double]) -> [String] {
        let statement = prepare("EXPLAIN QUERY PLAN " + sql)
        for (index, number) in doubles.enumerated() { sqlite3_bind_double(statement, Int32(index + 1), number) }
        var details: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { details.append(Self.text(statement, 3) ?? "") }
        sqlite3_finalize(statement)
        return details
    }
}

enum GeoCases {
    /// The query points: one lucky point must not decide the figures.
    static let points: [(label: String, coordinate: Coordinate)] = [
        ("Oslo", Coordinate(latitude: 59.91, longitude: 10.75)),
        // The 50 km box splits in two at the antimeridian; so do the nearest circles.
        ("Fiji 180°", Coordinate(latitude: -16.7, longitude: 179.9)),
        ("Dallas", Coordinate(latitude: 32.78, longitude: -96.8)),
    ]
    static let kilometers = 50.0
    static let nearestCount = 5

    /// The index `.createIndex("airports_coordinates", on: "airports", columns: ["lat", "lon"])`
    /// makes: the statement its migration step runs on SQLite.
    static let createIndex = "CREATE INDEX \"airports_coordinates\" ON \"airports\" (\"lat\", \"lon\")"

    /// `count` rows: the airports as they are, then copies with distinct keys (`ENGM_1`, …), each
    /// moved by up to 1° in latitude and in longitude (a fixed seed: the same rows every run),
    /// latitude reflected at the poles and longitude wrapped into -180…180.
    static func rows(_ base: [BenchAirport], count: Int) -> [BenchAirport] {
        var generator = SplitMix64(state: 27)
        var rows: [BenchAirport] = []
        rows.reserveCapacity(count)
        var copy = 0
        while rows.count < count {
            for airport in base where rows.count < count {
                var row = airport
                if copy > 0 {
                    row.icao += "_\(copy)"
                    var latitude = row.latitude + Double.random(in: -1...1, using: &generator)
                    if latitude > 90 { latitude = 180 - latitude }
                    if latitude < -90 { latitude = -180 - latitude }
                    var longitude = row.longitude + Double.random(in: -1...1, using: &generator)
                    if longitude > 180 { longitude -= 360 }
                    if longitude < -180 { longitude += 360 }
                    row.latitude = latitude
                    row.longitude = longitude
                }
                rows.append(row)
            }
            copy += 1
        }
        return rows
    }

    /// The condition SQLiteStore renders for `.within(kilometers:of:…)` and the values it binds:
    /// the box (split at the antimeridian, every longitude when it holds a pole), then the exact
    /// distance.
    static func withinSQL(_ center: Coordinate, _ kilometers: Double) -> (sql: String, doubles: [Double]) {
        guard let box = BoundingBox(around: center, kilometers: kilometers) else { return ("1 = 0", []) }
        let longitudes = box.longitudes.isEmpty ? [-180.0...180.0] : box.longitudes
        let ranges = longitudes.map { _ in "\"lon\" BETWEEN ? AND ?" }
        let sql =
            "\"lat\" BETWEEN ? AND ? AND "
            + (ranges.count == 1 ? ranges[0] : "(" + ranges.joined(separator: " OR ") + ")")
            + " AND depot_distance(?, ?, \"lat\", \"lon\") <= ?"
        var doubles = [max(box.latitude.lowerBound, -90), min(box.latitude.upperBound, 90)]
        for range in longitudes { doubles += [range.lowerBound, range.upperBound] }
        return (sql, doubles + [center.latitude, center.longitude, kilometers])
    }

    /// One circle of the nearest search: the rows within `kilometers`, nearest first, `limit` of them.
    static func nearestSQL(_ center: Coordinate, within kilometers: Double, limit: Int) -> (
        sql: String, doubles: [Double]
    ) {
        let within = withinSQL(center, kilometers)
        return (
            RawDatabase.selectAll + " WHERE " + within.sql
                + " ORDER BY depot_distance(?, ?, \"lat\", \"lon\") NULLS LAST, \"icao\" LIMIT \(limit)",
            within.doubles + [center.latitude, center.longitude]
        )
    }

    /// `Repository.nearest` by hand: circles of 25 km, four times wider until one holds `count`
    /// rows or covers the globe.
    static func rawNearest(_ database: RawDatabase, _ count: Int, to point: Coordinate) -> [BenchAirport] {
        let globe = GeoDistance.earthRadiusKilometers * .pi
        var radius = 25.0
        while true {
            let circle = nearestSQL(point, within: min(radius, globe), limit: count)
            let found = database.fetch(circle.sql, doubles: circle.doubles)
            if found.count == count || radius >= globe { return found }
            radius *= 4
        }
    }

    static func caseNames(_ label: String) -> (nearest: String, count: String, fetch: String) {
        (
            "geo nearest \(nearestCount), indexed @ \(label)",
            "geo within \(Int(kilometers)) km count, indexed @ \(label)",
            "geo within \(Int(kilometers)) km fetch, indexed @ \(label)"
        )
    }

    @MainActor
    static func run(n: Int, base: [BenchAirport], rounds: Int = 15) async throws -> [BenchResult] {
        let wanted = points.filter { point in
            let names = caseNames(point.label)
            return selected(names.nearest) || selected(names.count) || selected(names.fetch)
        }
        if wanted.isEmpty { return [] }
        let json = CommandLine.arguments.contains("--json")
        let clock = ContinuousClock()
        var started = clock.now
        let table = rows(base, count: n)
        let made = BenchHarness.milliseconds(clock.now - started)

        // Depot with the index, Depot without it (the same table) and raw C with it. Not through
        // `store.migrate`: on Swift 6.3.1 an optimized build crashes in it (TaskLocal.withValue of
        // an optional closure, in MigrationRunner; "migrate rewrite column" crashes the same way).
        // The index is made by the statement the migration step runs, on a connection of its own
        // after the rows are in, and the stores measured are opened after it.
        let indexedPath = scratchPath()
        let plainPath = scratchPath()
        let rawPath = scratchPath()
        defer {
            removeDatabase(indexedPath)
            removeDatabase(plainPath)
            removeDatabase(rawPath)
        }
        func seed(_ path: String) async throws {
            let repository = try SQLiteStore(path: path).repository(BenchAirport.self)
            for start in stride(from: 0, to: table.count, by: 50_000) {
                try await repository.insert(Array(table[start..<min(start + 50_000, table.count)]))
            }
        }
        started = clock.now
        try await seed(indexedPath)
        RawDatabase(path: indexedPath).execute(createIndex)
        let indexedSeeded = BenchHarness.milliseconds(clock.now - started)
        started = clock.now
        try await seed(plainPath)
        let plainSeeded = BenchHarness.milliseconds(clock.now - started)
        started = clock.now
        let raw = RawDatabase.withDepotFunctions(path: rawPath)
        raw.write(table, upsert: false)
        raw.execute(createIndex)
        let rawSeeded = BenchHarness.milliseconds(clock.now - started)
        let indexedStore = try SQLiteStore(path: indexedPath)
        let plainStore = try SQLiteStore(path: plainPath)
        let indexed = indexedStore.repository(BenchAirport.self)
        let plain = plainStore.repository(BenchAirport.self)
        if !json {
            print(
                String(
                    format: "(geo, %d rows: made in %.0f ms; seeded Depot with the index in %.0f ms, "
                        + "Depot without it in %.0f ms, raw C with it in %.0f ms)",
                    n, made, indexedSeeded, plainSeeded, rawSeeded))
        }
        checkSQL(printPlans: !json, raw: raw, depotPath: indexedPath, plainPath: plainPath)

        var results: [BenchResult] = []
        func record(_ name: String, _ measured: (medians: [Double], floor: Double?), baselines: [String]) {
            for (index, baseline) in baselines.enumerated() {
                var result = BenchResult(
                    case: name, backend: "sqlite", n: n, subject: "depot-indexed",
                    medianMilliseconds: measured.medians[0], baseline: baseline,
                    baselineMedianMilliseconds: measured.medians[index + 1])
                result.floor = measured.floor
                results.append(result)
            }
        }
        for (label, point) in wanted {
            let names = caseNames(label)
            if selected(names.nearest) {
                let medians = try await measure(
                    names.nearest, rounds: rounds,
                    [
                        {
                            try await indexed.nearest(
                                nearestCount, to: point, latitude: \.latitude, longitude: \.longitude)
                        },
                        {
                            try await indexed.fetch(
                                orderBy: [.nearest(to: point, latitude: \.latitude, longitude: \.longitude)],
                                limit: nearestCount)
                        },
                        { rawNearest(raw, nearestCount, to: point) },
                    ])
                record(names.nearest, medians, baselines: ["depot-scan", "raw-c-indexed"])
            }
            let within: Filter<BenchAirport> = .within(
                kilometers: kilometers, of: point, latitude: \.latitude, longitude: \.longitude)
            let rawWithin = withinSQL(point, kilometers)
            if selected(names.count) {
                let medians = try await measure(
                    names.count, rounds: rounds,
                    [
                        { try await indexed.count(where: within) },
                        { try await plain.count(where: within) },
                        {
                            raw.count(
                                "SELECT COUNT(*) FROM \"airports\" WHERE " + rawWithin.sql, doubles: rawWithin.doubles)
                        },
                    ])
                record(names.count, medians, baselines: ["depot-no-index", "raw-c-indexed"])
            }
            if selected(names.fetch) {
                let medians = try await measure(
                    names.fetch, rounds: rounds,
                    [
                        { try await indexed.fetch(where: within) },
                        { try await plain.fetch(where: within) },
                        {
                            raw.fetch(
                                RawDatabase.selectAll + " WHERE " + rawWithin.sql + " ORDER BY \"icao\"",
                                doubles: rawWithin.doubles)
                        },
                    ])
                record(names.fetch, medians, baselines: ["depot-no-index", "raw-c-indexed"])
            }
        }
        return results
    }

    /// Runs the sides alternately (one warm-up round, then `rounds` timed ones, the order rotating),
    /// and the last (the raw baseline) once more as its own A/A pair; returns each side's median
    /// milliseconds, in the order of `sides`, and the A/A floor. Every answer of every round must
    /// equal the first side's first one.
    @MainActor
    static func measure<Answer: Equatable>(
        _ name: String, rounds: Int, _ sides: [() async throws -> Answer]
    ) async throws -> (medians: [Double], floor: Double?) {
        let runs = try await BenchHarness.interleave(
            rounds: rounds,
            (sides + sides.suffix(1)).map { side in
                {
                    var answer: Answer?
                    let time = try await BenchHarness.time { answer = try await side() }
                    return (time: time, answer: answer)
                }
            })
        let expected = runs[0][0].answer
        for (index, side) in runs.enumerated() {
            precondition(side.allSatisfy { $0.answer == expected }, "\(name): side \(index) answered differently")
        }
        if !CommandLine.arguments.contains("--json"), let rows = expected as? [BenchAirport] {
            print("(\(name): \(rows.count) rows, first \(rows.prefix(3).map(\.icao).joined(separator: ", ")))")
        } else if !CommandLine.arguments.contains("--json"), let count = expected as? Int {
            print("(\(name): \(count) rows)")
        }
        let medians = runs.map { side in BenchHarness.median(side.map(\.time)) }
        return (
            Array(medians.dropLast()),
            BenchHarness.floor(again: medians[sides.count], baseline: medians[sides.count - 1])
        )
    }

    /// The statements SQLiteStore renders for the within count, the within fetch and one circle
    /// of `nearest` around `point`.
    static func depotSQL(_ point: Coordinate, nearestWithin radius: Double) -> [(label: String, SQLStatement)] {
        let renderer = SQLRenderer(dialect: .sqlite)
        let table = BenchAirport.schema.table
        let within = Filter<BenchAirport>.within(
            kilometers: kilometers, of: point, latitude: \.latitude, longitude: \.longitude)
        let circle = Filter<BenchAirport>.within(
            kilometers: radius, of: point, latitude: \.latitude, longitude: \.longitude)
        let nearest = Ordering<BenchAirport>.nearest(to: point, latitude: \.latitude, longitude: \.longitude)
        return [
            ("count", renderer.count(SelectQuery(table: table, predicate: within.node))),
            ("fetch", renderer.select(SelectQuery(table: table, predicate: within.node))),
            (
                "nearest circle",
                renderer.select(
                    SelectQuery(table: table, predicate: circle.node, ordering: [nearest.term], limit: nearestCount))
            ),
        ]
    }

    /// The hand-written statements must be the ones Depot renders (the raw side inlines its
    /// `LIMIT`, Depot binds it); then what SQLite plans for them, on the raw table, on Depot's
    /// indexed file and on Depot's file without the index (asked through a second connection).
    static func checkSQL(printPlans: Bool, raw: RawDatabase, depotPath: String, plainPath: String) {
        let depotWith = RawDatabase.withDepotFunctions(path: depotPath)
        let depotWithout = RawDatabase.withDepotFunctions(path: plainPath)
        for (label, point) in points {
            let within = withinSQL(point, kilometers)
            let nearest = nearestSQL(point, within: 25, limit: nearestCount)
            let limit = " LIMIT \(nearestCount)"
            let handWritten: [(sql: String, arguments: [StoredValue])] = [
                ("SELECT COUNT(*) FROM \"airports\" WHERE " + within.sql, within.doubles.map(StoredValue.double)),
                (
                    RawDatabase.selectAll + " WHERE " + within.sql + " ORDER BY \"icao\"",
                    within.doubles.map(StoredValue.double)
                ),
                (
                    String(nearest.sql.dropLast(limit.count)) + " LIMIT ?",
                    nearest.doubles.map(StoredValue.double) + [.integer(Int64(nearestCount))]
                ),
            ]
            for ((query, depot), mine) in zip(depotSQL(point, nearestWithin: 25), handWritten) {
                precondition(
                    depot.sql == mine.sql && depot.arguments == mine.arguments,
                    "geo \(query) @ \(label): the raw SQL is not Depot's:\n\(depot.sql)\n\(mine.sql)")
            }
            guard printPlans, label == points[0].label else { continue }
            let statements = [
                ("count", handWritten[0].sql, within.doubles), ("fetch", handWritten[1].sql, within.doubles),
                ("nearest circle", nearest.sql, nearest.doubles),
            ]
            for (database, name) in [
                (raw, "raw indexed"), (depotWith, "depot indexed"), (depotWithout, "depot no index"),
            ] {
                for (query, sql, doubles) in statements {
                    let plan = database.queryPlan(sql, doubles: doubles).joined(separator: "; ")
                    print("(plan, \(name), \(query) @ \(label): \(plan))")
                }
            }
        }
    }
}
