import BenchHarness
import Depot
import DepotPostgres
import Foundation
import Logging
import NIOCore
import PostgresNIO

// PostgreSQL cases: Depot's PostgresStore against PostgresNIO doing the same work by hand
// (UNNEST batches of 5,000 rows in one transaction, rows decoded straight into structs) and
// against COPY, the server's own bulk path (upserts: COPY into a temporary table, then one
// INSERT … ON CONFLICT from it). Run when DEPOT_POSTGRES_URL is set.

/// The PostgreSQL half of depot-bench.
struct PostgresCases: Sendable {
    let configuration: PostgresStore.Configuration
    let connection: PostgresConnection
    let logger = Logger(label: "depot-bench")

    static let columns = ["icao", "iata", "name", "city", "country", "elevation", "lat", "lon"]

    static func open(url: String) async throws -> PostgresCases {
        let configuration = try PostgresStore.Configuration(url: url)
        let connection = try await PostgresConnection.connect(
            on: PostgresClient.defaultEventLoopGroup.next(),
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "depot-bench"))
        return PostgresCases(configuration: configuration, connection: connection)
    }

    func close() async { try? await connection.close() }

    // MARK: Raw side

    func execute(_ sql: String, _ bindings: PostgresBindings = PostgresBindings()) async throws {
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).collect()
    }

    /// A fresh schema holding the table a careful engineer would write by hand.
    func createRawTable(_ schema: String) async throws {
        try await execute("CREATE SCHEMA \"\(schema)\"")
        try await execute(
            """
            CREATE TABLE "\(schema)"."airports" ("icao" text PRIMARY KEY, "iata" text, "name" text NOT NULL,
            "city" text, "country" text NOT NULL, "elevation" double precision NOT NULL,
            "lat" double precision NOT NULL, "lon" double precision NOT NULL)
            """)
    }

    func dropSchema(_ schema: String) async throws {
        try await execute("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
    }

    /// INSERT (or upsert) from one array per column, 5,000 rows a statement, one transaction.
    func unnestWrite(_ rows: [BenchAirport], schema: String, upsert: Bool) async throws {
        var sql = """
            INSERT INTO "\(schema)"."airports" SELECT i, NULLIF(a, ''), n, NULLIF(c, ''), co, e, la, lo
            FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::float8[],
            $8::float8[]) AS t(i, a, n, c, co, e, la, lo)
            """
        if upsert {
            sql += """
                 ON CONFLICT ("icao") DO UPDATE SET "iata" = EXCLUDED."iata", "name" = EXCLUDED."name",
                "city" = EXCLUDED."city", "country" = EXCLUDED."country", "elevation" = EXCLUDED."elevation",
                "lat" = EXCLUDED."lat", "lon" = EXCLUDED."lon"
                """
        }
        try await execute("BEGIN")
        var start = 0
        while start < rows.count {
            let batch = rows[start..<min(start + 5_000, rows.count)]
            var bindings = PostgresBindings(capacity: 8)
            bindings.append(batch.map(\.icao))
            bindings.append(batch.map { $0.iata ?? "" })
            bindings.append(batch.map(\.name))
            bindings.append(batch.map { $0.city ?? "" })
            bindings.append(batch.map(\.country))
            bindings.append(batch.map(\.elevation))
            bindings.append(batch.map(\.latitude))
            bindings.append(batch.map(\.longitude))
            try await execute(sql, bindings)
            start += 5_000
        }
        try await execute("COMMIT")
    }

    /// An upsert through COPY: the rows copied into a temporary table, then one
    /// `INSERT … SELECT … ON CONFLICT` from it, in one transaction.
    func stagedUpsert(_ rows: [BenchAirport], schema: String) async throws {
        try await execute("BEGIN")
        try await execute(
            "CREATE TEMPORARY TABLE stage ON COMMIT DROP AS SELECT * FROM \"\(schema)\".\"airports\" WITH NO DATA")
        try await copy(rows, schema: schema, into: "stage")
        try await execute(
            """
            INSERT INTO "\(schema)"."airports" SELECT * FROM stage ON CONFLICT ("icao") DO UPDATE SET
            "iata" = EXCLUDED."iata", "name" = EXCLUDED."name", "city" = EXCLUDED."city",
            "country" = EXCLUDED."country", "elevation" = EXCLUDED."elevation", "lat" = EXCLUDED."lat",
            "lon" = EXCLUDED."lon"
            """)
        try await execute("COMMIT")
    }

    /// COPY … FROM STDIN in text format: the server's bulk-load path, the limit.
    func copy(_ rows: [BenchAirport], schema: String, into table: String = "airports") async throws {
        /// Writes a text field, escaping only the bytes COPY's text format reserves.
        func write(_ text: String?, to buffer: inout ByteBuffer, then separator: UInt8) {
            defer { buffer.writeInteger(separator) }
            guard let text else {
                buffer.writeStaticString("\\N")
                return
            }
            let utf8 = text.utf8
            if !utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == 9 || $0 == 10 || $0 == 13 }) {
                buffer.writeString(text)
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 9: buffer.writeStaticString("\\t")
                case 10: buffer.writeStaticString("\\n")
                case 13: buffer.writeStaticString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
        }

        // copyFrom quotes the table name itself: reach the schema through the search path.
        try await execute("SET search_path TO \"\(schema)\"")
        try await connection.copyFrom(table: table, columns: Self.columns, logger: logger) {
            writer in
            var buffer = ByteBuffer()
            buffer.reserveCapacity(1 << 20)
            for row in rows {
                write(row.icao, to: &buffer, then: 9)
                write(row.iata, to: &buffer, then: 9)
                write(row.name, to: &buffer, then: 9)
                write(row.city, to: &buffer, then: 9)
                write(row.country, to: &buffer, then: 9)
                write(row.elevation.description, to: &buffer, then: 9)
                write(row.latitude.description, to: &buffer, then: 9)
                write(row.longitude.description, to: &buffer, then: 10)
                if buffer.readableBytes > 1 << 20 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
    }

    /// Every row (or those `condition` selects), decoded straight into structs.
    func fetchAll(schema: String, where condition: String = "TRUE") async throws -> [BenchAirport] {
        try await decodeAirports(
            PostgresQuery(
                unsafeSQL: """
                    SELECT "icao", "iata", "name", "city", "country", "elevation", "lat", "lon"
                    FROM "\(schema)"."airports" WHERE \(condition) ORDER BY "icao"
                    """))
    }

    /// The rows `query` selects (the eight columns in schema order), decoded straight into structs.
    func decodeAirports(_ query: PostgresQuery, on other: PostgresConnection? = nil) async throws -> [BenchAirport] {
        let rows = try await (other ?? connection).query(query, logger: logger)
        var result: [BenchAirport] = []
        for try await (icao, iata, name, city, country, elevation, latitude, longitude) in rows.decode(
            (String, String?, String, String?, String, Double, Double, Double).self)
        {
            result.append(
                BenchAirport(
                    icao: icao, iata: iata, name: name, city: city, country: country, elevation: elevation,
                    latitude: latitude, longitude: longitude))
        }
        return result
    }

    /// A PostgresClient pool for the raw side: as PostgresNIO sets one up, or `lean` as Depot does
    /// (no keep-alive pings).
    func rawPool(lean: Bool) -> PostgresClient {
        var settings = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        if lean { settings.options.keepAliveBehavior = nil }
        return PostgresClient(configuration: settings, backgroundLogger: logger)
    }

    // MARK: Depot side

    static func binding(_ text: String) -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(text)
        return bindings
    }

    /// A key a lookup did not find.
    struct BenchMiss: Error {
        let key: String
        init(_ key: String) { self.key = key }
    }

    func store(_ schema: String) -> PostgresStore {
        var settings = configuration
        settings.schema = schema
        settings.maximumConnections = 2
        return PostgresStore(configuration: settings)
    }

    // MARK: Rounds

    /// A baseline: its name, its untimed preparation of a fresh raw table, and the timed work.
    struct Baseline {
        var name: String
        var prepare: (String) async throws -> Void = { _ in }
        var work: (String) async throws -> Void
    }

    /// The subject and each baseline in rotating order (BenchHarness.interleave), each on a fresh
    /// schema: one warm-up round, then `rounds` timed rounds. Preparation is untimed on both sides
    /// (the Depot store is opened and its table created there, as the raw side's table is). One
    /// result per baseline, all against the same subject runs.
    func compare(
        _ name: String, n: Int, rounds: Int = BenchHarness.defaultRounds,
        subject: @escaping (PostgresStore) async throws -> Void,
        subjectPrepare: @escaping (PostgresStore) async throws -> Void, baselines: [Baseline]
    ) async throws -> [BenchResult] {
        if !selected(name) { return [] }
        func scratchSchema() -> String {
            "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        }
        var sides: [() async throws -> Double] = [
            {
                let store = store(scratchSchema())
                try await subjectPrepare(store)
                let milliseconds = try await BenchHarness.time { try await subject(store) }
                try await store.dropSchema()
                await store.close()
                return milliseconds
            }
        ]
        for baseline in baselines {
            sides.append {
                let schema = scratchSchema()
                try await createRawTable(schema)
                try await baseline.prepare(schema)
                let milliseconds = try await BenchHarness.time { try await baseline.work(schema) }
                try await dropSchema(schema)
                return milliseconds
            }
        }
        sides.append(sides[1])  // the first baseline again: the case's A/A floor
        let medians = try await BenchHarness.interleave(rounds: rounds, sides).map(BenchHarness.median)
        let floor = BenchHarness.floor(again: medians[medians.count - 1], baseline: medians[1])
        return zip(baselines, medians.dropFirst()).map { baseline, median in
            var result = BenchResult(
                case: name, backend: "postgres", n: n, subject: "depot", medianMilliseconds: medians[0],
                baseline: baseline.name, baselineMedianMilliseconds: median)
            result.floor = floor
            return result
        }
    }

    func run(n: Int, rows: [BenchAirport], updated: [BenchAirport]) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        let airports = { (store: PostgresStore) in store.repository(BenchAirport.self) }
        // Opening the store and creating its table happen before the clock starts (one row
        // written and removed: a count alone would not create the table).
        let open: (PostgresStore) async throws -> Void = { store in
            guard let first = rows.first else { return }
            try await airports(store).insert(first)
            _ = try await airports(store).removeAll()
        }
        let seed: (PostgresStore) async throws -> Void = { try await airports($0).insert(rows) }
        let seedRaw: (String) async throws -> Void = { try await unnestWrite(rows, schema: $0, upsert: false) }

        results += try await compare(
            "pg insert", n: n, subject: { try await airports($0).insert(rows) }, subjectPrepare: open,
            baselines: [
                Baseline(name: "raw-unnest") { try await unnestWrite(rows, schema: $0, upsert: false) },
                Baseline(name: "copy") { try await copy(rows, schema: $0) },
            ])
        results += try await compare(
            "pg upsert over existing", n: n, subject: { try await airports($0).upsert(updated) },
            subjectPrepare: seed,
            baselines: [
                Baseline(name: "raw-unnest", prepare: seedRaw) {
                    try await unnestWrite(updated, schema: $0, upsert: true)
                },
                Baseline(name: "copy-staged", prepare: seedRaw) { try await stagedUpsert(updated, schema: $0) },
            ])
        // Where COPY starts to pay (Depot copies from 500 rows): 50 batches of `size` rows, each its
        // own transaction, by hand as arrays and through COPY. Run only when named:
        // `--only "pg batches"`.
        if onlyCase?.contains("pg batches") == true {
            for size in [50, 100, 250, 500, 1_000] where size * 50 <= rows.count {
                let batches = (0..<50).map { Array(rows[($0 * size)..<(($0 + 1) * size)]) }
                results += try await compare(
                    "pg batches of \(size) rows, 50 transactions", n: size * 50,
                    subject: { store in for batch in batches { try await airports(store).insert(batch) } },
                    subjectPrepare: open,
                    baselines: [
                        Baseline(name: "raw-unnest") { schema in
                            for batch in batches { try await unnestWrite(batch, schema: schema, upsert: false) }
                        },
                        Baseline(name: "copy") { schema in
                            for batch in batches {
                                // In a transaction, as the UNNEST side's batches are.
                                try await execute("BEGIN")
                                try await copy(batch, schema: schema)
                                try await execute("COMMIT")
                            }
                        },
                    ])
            }
        }
        results += try await compare(
            "pg fetch all", n: n, subject: { _ = try await airports($0).fetchAll() }, subjectPrepare: seed,
            baselines: [Baseline(name: "raw-postgresnio", prepare: seedRaw) { _ = try await fetchAll(schema: $0) }])
        // What one small read costs per call (#46): `find` by key, 1,000 times, off the main actor,
        // against the same lookup on the raw side's dedicated connection, through a PostgresClient
        // pool as PostgresNIO sets it up by default, and through one set up as Depot's (no
        // keep-alive: the pool arms one timer per call, not two). Each decodes the row into a struct.
        if selected("pg find by key x1000") {
            results += try await findByKey(n: n, rows: rows, seed: seed, seedRaw: seedRaw)
        }
        // Depot folds every name in the server (depot_fold: Unicode full case folding); the raw
        // side lowers ASCII only, what a hand-written query on a C-collation database gets.
        results += try await compare(
            "pg search name ~ \"field\" any case", n: n,
            subject: { _ = try await airports($0).fetch(where: .contains(\.name, "FIELD", .caseInsensitive)) },
            subjectPrepare: seed,
            baselines: [
                Baseline(name: "raw-lower", prepare: seedRaw) {
                    _ = try await fetchAll(schema: $0, where: "strpos(lower(\"name\"), 'field') > 0")
                }
            ])
        return results
    }

    /// The `pg find by key x1000` case (see `run`): Depot's `find` against a dedicated connection
    /// and two PostgresClient pools, started here and shut down before it returns.
    func findByKey(
        n: Int, rows: [BenchAirport], seed: @escaping (PostgresStore) async throws -> Void,
        seedRaw: @escaping (String) async throws -> Void
    ) async throws -> [BenchResult] {
        let airports = { (store: PostgresStore) in store.repository(BenchAirport.self) }
        let keys = stride(from: 0, to: rows.count, by: max(1, rows.count / 1_000)).prefix(1_000).map { rows[$0].icao }
        let defaultPool = rawPool(lean: false)
        let leanPool = rawPool(lean: true)
        let pools = [defaultPool, leanPool].map { pool in Task { await pool.run() } }
        let pointSQL = { (schema: String) in
            """
            SELECT "icao", "iata", "name", "city", "country", "elevation", "lat", "lon"
            FROM "\(schema)"."airports" WHERE "icao" = $1
            """
        }
        func pooledLookups(_ pool: PostgresClient, _ schema: String) async throws {
            let sql = pointSQL(schema)
            try await Task.detached {
                for key in keys {
                    let query = PostgresQuery(unsafeSQL: sql, binds: Self.binding(key))
                    let found = try await pool.withConnection { try await decodeAirports(query, on: $0) }
                    guard found.count == 1 else { throw BenchMiss(key) }
                }
            }.value
        }
        // The pools stop whatever `compare` does, thrown errors included.
        let results: Swift.Result<[BenchResult], any Error>
        do {
            results = .success(
                try await compare(
                    "pg find by key x1000", n: n,
                    subject: { store in
                        let repository = airports(store)
                        try await Task.detached {
                            for key in keys {
                                guard try await repository.find(key) != nil else { throw BenchMiss(key) }
                            }
                        }.value
                    }, subjectPrepare: seed,
                    baselines: [
                        Baseline(name: "raw-connection", prepare: seedRaw) { schema in
                            let sql = pointSQL(schema)
                            try await Task.detached {
                                for key in keys {
                                    let query = PostgresQuery(unsafeSQL: sql, binds: Self.binding(key))
                                    let found = try await decodeAirports(query)
                                    guard found.count == 1 else { throw BenchMiss(key) }
                                }
                            }.value
                        },
                        Baseline(name: "raw-pool", prepare: seedRaw) { try await pooledLookups(defaultPool, $0) },
                        Baseline(name: "raw-pool-lean", prepare: seedRaw) { try await pooledLookups(leanPool, $0) },
                    ]))
        } catch {
            results = .failure(error)
        }
        for pool in pools {
            pool.cancel()
            await pool.value
        }
        return try results.get()
    }
}
