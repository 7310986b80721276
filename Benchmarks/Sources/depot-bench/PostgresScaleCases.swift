import BenchHarness
import Depot
import DepotPostgres
import Foundation
import Logging
import PostgresNIO

// PostgreSQL at scale: one table of n rows a side, loaded once in chunks of 100,000 rows (so the
// process holds one chunk, not the table), then the reads and writes an app makes against it —
// Depot's PostgresStore against PostgresNIO by hand, same server, same run, rounds interleaved.
// Not part of the default run:
//
//   swift run -c release --package-path Benchmarks depot-bench --postgres-scale --n 10000000 [--postgres URL]
//
// The hand-written table is what a careful engineer writes (`text` columns, an index on country);
// the Depot table is what Depot makes (`text COLLATE "C"`), given the same index.

extension PostgresCases {
    static let scaleChunk = 100_000

    /// Rows `offset ..< offset + count` of the airports repeated with distinct keys (`ENGM_12`).
    static func scaleRows(_ base: [BenchAirport], from offset: Int, count: Int) -> [BenchAirport] {
        (offset..<offset + count).map { index in
            var row = base[index % base.count]
            let copy = index / base.count
            if copy > 0 { row.icao += "_\(copy)" }
            return row
        }
    }

    /// The rows a statement with one text parameter selects, decoded into structs.
    func rawRows(_ sql: String, _ value: String) async throws -> [BenchAirport] {
        var bindings = PostgresBindings()
        bindings.append(value)
        return try await decodeAirports(PostgresQuery(unsafeSQL: sql, binds: bindings))
    }

    func rawCount(_ sql: String, _ value: String) async throws -> Int {
        var bindings = PostgresBindings()
        bindings.append(value)
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count
    }

    /// One result: Depot's median against a baseline's, both timed in the same interleaved rounds.
    private func result(
        _ name: String, n: Int, baseline: String, rounds: Int, subject: @escaping () async throws -> Void,
        raw: @escaping () async throws -> Void
    ) async throws -> [BenchResult] {
        guard selected(name) else { return [] }
        let medians = try await BenchHarness.compareWithFloor(
            rounds: rounds, subject: { try await BenchHarness.time(subject) },
            baseline: { try await BenchHarness.time(raw) })
        var result = BenchResult(
            case: name, backend: "postgres", n: n, subject: "depot", medianMilliseconds: medians.subject,
            baseline: baseline, baselineMedianMilliseconds: medians.baseline)
        result.floor = medians.floor
        return [result]
    }

    func runScale(n: Int, base: [BenchAirport], report: @Sendable (BenchResult) -> Void) async throws {
        let depotSchema = "depot_scale_depot"
        let rawSchema = "depot_scale_raw"
        let copySchema = "depot_scale_copy"
        for schema in [depotSchema, rawSchema, copySchema] { try await dropSchema(schema) }
        try await createRawTable(rawSchema)
        try await createRawTable(copySchema)
        var settings = configuration
        settings.schema = depotSchema
        settings.maximumConnections = 2
        // A 100,000-row chunk takes over a second here: no warning for each.
        settings.logging = SQLLogging(logger: Logger(label: "depot-bench"), slowStatementThreshold: nil)
        let store = PostgresStore(configuration: settings)
        let airports = store.repository(BenchAirport.self)
        // The Depot table exists before the clock starts, as the raw ones do.
        try await airports.insert(base[0])
        _ = try await airports.removeAll()

        // Load: each chunk made once and written by each side in turn.
        var load = (depot: 0.0, unnest: 0.0, copy: 0.0)
        for offset in stride(from: 0, to: n, by: Self.scaleChunk) {
            let rows = Self.scaleRows(base, from: offset, count: min(Self.scaleChunk, n - offset))
            load.depot += try await BenchHarness.time { try await airports.insert(rows) }
            load.unnest += try await BenchHarness.time {
                try await unnestWrite(rows, schema: rawSchema, upsert: false)
            }
            load.copy += try await BenchHarness.time { try await copy(rows, schema: copySchema) }
        }
        try await dropSchema(copySchema)
        for baseline in [("raw-unnest", load.unnest), ("copy", load.copy)] {
            report(
                BenchResult(
                    case: "pg scale load in 100k-row chunks", backend: "postgres", n: n, subject: "depot",
                    medianMilliseconds: load.depot, baseline: baseline.0, baselineMedianMilliseconds: baseline.1))
        }
        for schema in [depotSchema, rawSchema] {
            try await execute("CREATE INDEX ON \"\(schema)\".\"airports\" (\"country\")")
            try await execute("ANALYZE \"\(schema)\".\"airports\"")
        }

        let table = "FROM \"\(rawSchema)\".\"airports\""
        let columns = "SELECT \"icao\", \"iata\", \"name\", \"city\", \"country\", \"elevation\", \"lat\", \"lon\" "
        // Keys spread over the table: 1,000 lookups a round.
        let keys = (0..<1000).map { Self.scaleRows(base, from: ($0 * 7919) % n, count: 1)[0].icao }
        for result in try await result(
            "pg scale find 1000 keys", n: n, baseline: "raw-postgresnio", rounds: BenchHarness.defaultRounds,
            subject: { for key in keys { _ = try await airports.find(key) } },
            raw: { for key in keys { _ = try await rawRows(columns + table + " WHERE \"icao\" = $1", key) } })
        { report(result) }
        for result in try await result(
            "pg scale first page of 20 by key from K", n: n, baseline: "raw-postgresnio",
            rounds: BenchHarness.defaultRounds,
            subject: { _ = try await airports.fetch(where: \.icao >= "K", orderBy: [.ascending(\.icao)], limit: 20) },
            raw: {
                _ = try await rawRows(columns + table + " WHERE \"icao\" >= $1 ORDER BY \"icao\" LIMIT 20", "K")
            })
        { report(result) }
        for result in try await result(
            "pg scale fetch country == NO (index)", n: n, baseline: "raw-postgresnio",
            rounds: BenchHarness.defaultRounds,
            subject: { _ = try await airports.fetch(where: \.country == "NO") },
            raw: { _ = try await rawRows(columns + table + " WHERE \"country\" = $1 ORDER BY \"icao\"", "NO") })
        { report(result) }
        for result in try await result(
            "pg scale count country == NO (index)", n: n, baseline: "raw-postgresnio",
            rounds: BenchHarness.defaultRounds,
            subject: { _ = try await airports.count(where: \.country == "NO") },
            raw: { _ = try await rawCount("SELECT count(*) " + table + " WHERE \"country\" = $1", "NO") })
        { report(result) }
        // 10,000 existing rows changed, spread over the table.
        let changed = (0..<10_000).map { index -> BenchAirport in
            var row = Self.scaleRows(base, from: (index * 104_729) % n, count: 1)[0]
            row.elevation += 1
            return row
        }
        let unique = Array(Dictionary(changed.map { ($0.icao, $0) }, uniquingKeysWith: { first, _ in first }).values)
        // Each round changes the rows again (Depot skips rows equal to what is stored).
        var rounds = (depot: 0.0, raw: 0.0)
        func bumped(_ by: Double) -> [BenchAirport] {
            unique.map { row in
                var row = row
                row.elevation += by
                return row
            }
        }
        for result in try await result(
            "pg scale upsert \(unique.count) existing", n: n, baseline: "raw-unnest",
            rounds: BenchHarness.defaultRounds,
            subject: {
                rounds.depot += 1
                _ = try await airports.upsert(bumped(rounds.depot))
            },
            raw: {
                rounds.raw += 1
                try await unnestWrite(bumped(rounds.raw), schema: rawSchema, upsert: true)
            })
        { report(result) }
        try await store.dropSchema()
        await store.close()
        try await dropSchema(rawSchema)
    }
}
