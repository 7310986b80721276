import BenchHarness
import Depot
import DepotSQLite
import Foundation
import GRDBSQLite

// Migrations (issue #11): a step that adds a column and fills it from another over 1,000,000 rows,
// written as a data step that reads and writes through repositories in batches, against the same
// rewrite done by hand in C (one transaction: ALTER TABLE, then a streaming SELECT and a prepared
// UPDATE per row). Time, and how far each raises the process's resident memory.

struct BenchReading: Entity {
    var id: Int
    var station: String
    var celsius: Double
    static let schema = Schema<BenchReading>("readings", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.station, "station")
        Column(\.celsius, "celsius")
    }
}

struct BenchReadingV2: Entity {
    var id: Int
    var station: String
    var celsius: Double
    var fahrenheit: Double?
    static let schema = Schema<BenchReadingV2>("readings", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.station, "station")
        Column(\.celsius, "celsius")
        Column(\.fahrenheit, "fahrenheit")
    }
}

enum MigrationCases {
    static let migrations = Migrations([
        Migration("1 readings", [.createTable(BenchReading.self)]),
        Migration(
            "2 fahrenheit",
            [
                .addColumn("fahrenheit", .double, nullable: true, to: "readings"),
                .data("celsius to fahrenheit") { tx in
                    let readings = tx.repository(BenchReadingV2.self)
                    for try await batch in readings.batches(of: 10_000) {
                        try await readings.upsert(
                            batch.map {
                                BenchReadingV2(
                                    id: $0.id, station: $0.station, celsius: $0.celsius,
                                    fahrenheit: $0.celsius * 9 / 5 + 32)
                            })
                    }
                },
            ]),
    ])

    /// Rows `start..<end` of the table, made on the fly (never all at once).
    static func readings(_ range: Range<Int>) -> [BenchReading] {
        range.map { BenchReading(id: $0, station: "station \($0 % 1000)", celsius: Double($0 % 700) / 10 - 30) }
    }

    @MainActor
    static func run(rows count: Int, rounds: Int) async throws -> [BenchResult] {
        let name = "migrate rewrite column"
        if !selected(name) { return [] }
        var depotGrowth: [Double] = []
        var rawGrowth: [Double] = []
        let medians = try await BenchHarness.compareWithFloor(
            rounds: rounds,
            subject: {
                let path = scratchPath()
                defer { removeDatabase(path) }
                let store = try SQLiteStore(path: path)
                try await store.migrate(migrations, to: 1)
                for start in stride(from: 0, to: count, by: 50_000) {
                    try await store.repository(BenchReading.self).insert(
                        readings(start..<min(start + 50_000, count)))
                }
                let before = BenchHarness.currentRSSMegabytes() ?? 0
                BenchHarness.resetPeakRSS()
                let time = try await BenchHarness.time { try await store.migrate(migrations) }
                depotGrowth.append((BenchHarness.peakRSSMegabytes() ?? 0) - before)
                let check = try await store.repository(BenchReadingV2.self).first(where: \.id == count - 1)
                guard let check, check.fahrenheit == check.celsius * 9 / 5 + 32 else {
                    throw BenchError(description: "\(name): the step did not rewrite the last row")
                }
                return time
            },
            baseline: {
                let path = scratchPath()
                defer { removeDatabase(path) }
                let database = RawDatabase(path: path)
                database.execute(
                    "CREATE TABLE \"readings\" (\"id\" INTEGER NOT NULL, \"station\" TEXT NOT NULL, "
                        + "\"celsius\" REAL NOT NULL, PRIMARY KEY (\"id\"))")
                database.execute("BEGIN IMMEDIATE")
                let insert = database.prepare("INSERT INTO \"readings\" VALUES (?, ?, ?)")
                for start in stride(from: 0, to: count, by: 50_000) {
                    for row in readings(start..<min(start + 50_000, count)) {
                        sqlite3_bind_int64(insert, 1, Int64(row.id))
                        RawDatabase.bind(insert, 2, row.station)
                        sqlite3_bind_double(insert, 3, row.celsius)
                        sqlite3_step(insert)
                        sqlite3_reset(insert)
                    }
                }
                sqlite3_finalize(insert)
                database.execute("COMMIT")
                let before = BenchHarness.currentRSSMegabytes() ?? 0
                BenchHarness.resetPeakRSS()
                let time = await BenchHarness.time { rawRewrite(database) }
                rawGrowth.append((BenchHarness.peakRSSMegabytes() ?? 0) - before)
                return time
            })
        var result = BenchResult(
            case: name, backend: "sqlite", n: count, subject: "depot-data-step", medianMilliseconds: medians.subject,
            baseline: "raw-c-streaming", baselineMedianMilliseconds: medians.baseline)
        result.floor = medians.floor
        result.peakRSSMegabytes = BenchHarness.median(depotGrowth)
        if CommandLine.arguments.contains("--json") == false {
            print(
                String(
                    format: "(%@: resident memory grew by %.1f MB for Depot, %.1f MB for raw C, medians)",
                    name, BenchHarness.median(depotGrowth), BenchHarness.median(rawGrowth)))
        }
        return [result]
    }

    /// ALTER TABLE, then every row read in key order and updated, in one transaction.
    static func rawRewrite(_ database: RawDatabase) {
        database.execute("BEGIN IMMEDIATE")
        database.execute("ALTER TABLE \"readings\" ADD COLUMN \"fahrenheit\" REAL")
        let select = database.prepare("SELECT \"id\", \"celsius\" FROM \"readings\" ORDER BY \"id\"")
        let update = database.prepare("UPDATE \"readings\" SET \"fahrenheit\" = ?2 WHERE \"id\" = ?1")
        while sqlite3_step(select) == SQLITE_ROW {
            sqlite3_bind_int64(update, 1, sqlite3_column_int64(select, 0))
            sqlite3_bind_double(update, 2, sqlite3_column_double(select, 1) * 9 / 5 + 32)
            sqlite3_step(update)
            sqlite3_reset(update)
        }
        sqlite3_finalize(select)
        sqlite3_finalize(update)
        database.execute("COMMIT")
    }
}
