import BenchHarness
import Depot
import DepotPostgres
import DepotSQL
import Foundation
import Logging
import PostgresNIO

// Search through an index on PostgreSQL (issue #40): Depot's GIN index over
// `depot_search_vector(name)` against a GIN index written by hand over `to_tsvector('simple', name)`
// (PostgreSQL's own full-text search with its `simple` configuration: the nearest word definition it
// has built in, lowercased words, no stemming), queried by hand with `to_tsquery('simple',
// 'osl:* & gard:*')` and ordered by `ts_rank`; and against Depot's scan (`.contains` for each
// word). Same rows (GeoCases': the airports, then jittered copies), same server, same run, rounds
// interleaved. Depot's answers must equal TextSearch's definition computed here; the hand-written
// index's are compared loosely (its parser splits words its own way).
//
//   swift run -c release --package-path Benchmarks depot-bench --only "pg search" --n 1000000
//
// The one-time costs (one round): Depot inserting the rows in batches into a table with the index
// and into one without; the same batches by hand (UNNEST) into a table with the hand-written index
// and one without; building each index over rows already there.

extension PostgresCases {
    static func searchNames(_ query: String) -> (count: String, fetch: String) {
        ("pg search count \"\(query)\"", "pg search fetch \(SearchCases.limit) \"\(query)\"")
    }
    static let searchInsertName = "pg search index insert n rows"
    static let searchBuildName = "pg search index build over n rows"

    /// The hand-written index over `schema`'s airports.
    static func tsvectorIndex(_ schema: String) -> String {
        "CREATE INDEX ON \"\(schema)\".\"airports\" USING gin (to_tsvector('simple', \"name\"))"
    }

    func runSearch(n: Int, base: [BenchAirport]) async throws -> [BenchResult] {
        let wanted = SearchCases.queries.filter { query in
            let names = Self.searchNames(query)
            return selected(names.count) || selected(names.fetch)
        }
        let costs = [Self.searchInsertName, Self.searchBuildName].filter(selected)
        if wanted.isEmpty && costs.isEmpty { return [] }
        let rounds = n >= 1_000_000 ? 7 : 11
        let json = CommandLine.arguments.contains("--json")
        func say(_ line: String) { if !json { print(line) } }
        let rows = GeoCases.rows(base, count: n)
        let reference = SearchCases.Reference(rows)
        var results: [BenchResult] = []
        func record(_ name: String, subject: String, _ medians: [Double], baselines: [String], floor: Double? = nil) {
            results += SearchCases.results(
                name, backend: "postgres", n: n, subject: subject, medians, baselines: baselines, floor: floor)
        }

        // One-time costs, each side on a fresh schema.
        let (indexed, plain, raw, rawIndexed) = (
            "bench_search_depot", "bench_search_plain", "bench_search_raw", "bench_search_raw_gin"
        )
        for schema in [indexed, plain, raw, rawIndexed] { try await dropSchema(schema) }
        var settings = configuration
        settings.maximumConnections = 2
        settings.logging = SQLLogging(logger: Logger(label: "depot-bench"), slowStatementThreshold: nil)
        func open(_ schema: String) -> PostgresStore {
            var scoped = settings
            scoped.schema = schema
            return PostgresStore(configuration: scoped)
        }
        func batches(_ write: ([BenchAirport]) async throws -> Void) async throws {
            for start in stride(from: 0, to: rows.count, by: SearchCases.batch) {
                try await write(Array(rows[start..<min(start + SearchCases.batch, rows.count)]))
            }
        }
        let store = open(indexed)
        try await store.migrate(SearchCases.migrations)
        let depot = store.repository(BenchAirport.self)
        let depotWithIndex = try await BenchHarness.time { try await batches { try await depot.insert($0) } }
        let plainStore = open(plain)
        try await plainStore.migrate(Migrations([SearchCases.migrations.steps[0]]))
        let depotWithout = try await BenchHarness.time {
            try await batches { try await plainStore.repository(BenchAirport.self).insert($0) }
        }
        let depotBuild = try await BenchHarness.time { try await plainStore.migrate(SearchCases.migrations) }
        try await plainStore.dropSchema()
        await plainStore.close()
        try await createRawTable(rawIndexed)
        try await execute(Self.tsvectorIndex(rawIndexed))
        let rawWithIndex = try await BenchHarness.time {
            try await batches { try await unnestWrite($0, schema: rawIndexed, upsert: false) }
        }
        try await createRawTable(raw)
        let rawWithout = try await BenchHarness.time {
            try await batches { try await unnestWrite($0, schema: raw, upsert: false) }
        }
        let rawBuild = try await BenchHarness.time { try await execute(Self.tsvectorIndex(raw)) }
        try await dropSchema(raw)
        for schema in [indexed, rawIndexed] { try await execute("VACUUM ANALYZE \"\(schema)\".\"airports\"") }
        let sizes = try await searchIndexSizes([indexed, rawIndexed])
        say(
            String(
                format: "(pg search, %d rows: Depot inserts them in %.0f ms into a table with the index, %.0f ms "
                    + "without; by hand %.0f ms with the tsvector index, %.0f ms without; builds: Depot %.0f ms, "
                    + "tsvector %.0f ms; index sizes: Depot %@, tsvector %@)",
                n, depotWithIndex, depotWithout, rawWithIndex, rawWithout, depotBuild, rawBuild, sizes[0], sizes[1]))
        if selected(Self.searchInsertName) {
            record(
                Self.searchInsertName, subject: "depot-with-index", [depotWithIndex, depotWithout, rawWithIndex],
                baselines: ["depot-no-index", "raw-tsvector-gin"])
            record(
                Self.searchInsertName + ", tsvector by hand", subject: "raw-tsvector-gin", [rawWithIndex, rawWithout],
                baselines: ["raw-no-index"])
        }
        if selected(Self.searchBuildName) {
            record(
                Self.searchBuildName, subject: "depot-migrate", [depotBuild, rawBuild], baselines: ["raw-tsvector-gin"])
        }

        // Depot's functions resolve through the path, as on Depot's connections.
        try await execute("SET search_path TO \"\(indexed)\", public")
        let table = "FROM \"\(rawIndexed)\".\"airports\""
        let columns = "SELECT \"icao\", \"iata\", \"name\", \"city\", \"country\", \"elevation\", \"lat\", \"lon\" "
        let vector = "to_tsvector('simple', \"name\")"
        for query in wanted {
            let names = Self.searchNames(query)
            let tokens = TextSearch.tokens(of: query, .caseInsensitive)
            let matches = Filter<BenchAirport>.matches(\.name, query)
            let relevance = Ordering<BenchAirport>.relevance(\.name, to: query)
            let scanned = SearchCases.scan(tokens)
            let matched = reference.matches(tokens)
            // Tokens hold only letters and digits here: no tsquery syntax to escape.
            let prefixes = tokens.map { $0 + ":*" }.joined(separator: " & ")
            let whole = tokens.joined(separator: " | ")
            // Depot's own statements, run by hand in the Depot schema.
            let rendered = SearchCases.depotSQL(matches, relevance, dialect: PostgresDialect())
            func qualified(_ sql: String) -> String {
                sql.replacingOccurrences(of: "FROM \"airports\"", with: "FROM \"\(indexed)\".\"airports\"")
            }
            let (countByHand, fetchByHand) = (
                Self.query(rendered.count, qualified), Self.query(rendered.fetch, qualified)
            )
            if selected(names.count) {
                let (medians, answers, floor) = try await SearchCases.measure(
                    names.count, rounds: rounds, floorOf: 2,
                    [
                        { @Sendable in try await depot.count(where: matches) },
                        { @Sendable in try await depot.count(where: scanned) },
                        { @Sendable in
                            try await rawCount(
                                "SELECT count(*) \(table) WHERE \(vector) @@ to_tsquery('simple', $1)", prefixes)
                        },
                        { @Sendable in try await rawCount(countByHand) },
                    ])
                precondition(
                    answers[0] == matched.count && answers[3] == answers[0],
                    "\(names.count): Depot counts \(answers[0]) (by hand \(answers[3])), TextSearch \(matched.count)")
                precondition(answers[1] >= answers[0], "\(names.count): the scan found fewer rows than the index")
                say(
                    "(\(names.count): \(answers[0]) rows (TextSearch's definition: \(matched.count)); "
                        + "the scan for substrings \(answers[1]); tsvector 'simple' \(answers[2]))")
                record(
                    names.count, subject: "depot-indexed", medians,
                    baselines: ["depot-scan", "raw-tsvector-gin", "raw-depot-sql"], floor: floor)
            }
            if selected(names.fetch) {
                var bindings = PostgresBindings()
                bindings.append(prefixes)
                bindings.append(whole)
                let ranked = PostgresQuery(
                    unsafeSQL: columns + table + " WHERE \(vector) @@ to_tsquery('simple', $1) ORDER BY "
                        + "ts_rank(\(vector), to_tsquery('simple', $2)) DESC, length(\"name\"), \"icao\" "
                        + "LIMIT \(SearchCases.limit)", binds: bindings)
                let (medians, answers, floor) = try await SearchCases.measure(
                    names.fetch, rounds: rounds, floorOf: 2,
                    [
                        { @Sendable in
                            try await depot.fetch(where: matches, orderBy: [relevance], limit: SearchCases.limit)
                        },
                        { @Sendable in
                            try await depot.fetch(where: scanned, orderBy: [relevance], limit: SearchCases.limit)
                        },
                        { @Sendable in try await decodeAirports(ranked) },
                        { @Sendable in try await decodeAirports(fetchByHand) },
                    ])
                let expected = reference.best(matched, tokens, limit: SearchCases.limit)
                precondition(
                    answers[0].map(\.icao) == expected && answers[3] == answers[0],
                    "\(names.fetch): Depot's best \(answers[0].map(\.icao)), TextSearch's \(expected)")
                func shown(_ rows: [BenchAirport]) -> String { rows.prefix(4).map(\.icao).joined(separator: ", ") }
                say(
                    "(\(names.fetch): Depot \(shown(answers[0])) …; the scan \(shown(answers[1])) …; "
                        + "tsvector by ts_rank \(shown(answers[2])) …)")
                record(
                    names.fetch, subject: "depot-indexed", medians,
                    baselines: ["depot-scan", "raw-tsvector-gin", "raw-depot-sql"], floor: floor)
            }
        }
        try await execute("RESET search_path")
        try await store.dropSchema()
        await store.close()
        try await dropSchema(rawIndexed)
        return results
    }

    func rawCount(_ query: PostgresQuery) async throws -> Int {
        var count = 0
        for try await value in try await connection.query(query, logger: logger).decode(Int.self) { count = value }
        return count
    }

    /// `statement` (text and whole-number arguments) as a query, its SQL passed through `change`.
    static func query(_ statement: SQLStatement, _ change: (String) -> String) -> PostgresQuery {
        var bindings = PostgresBindings()
        for argument in statement.arguments {
            switch argument {
            case .text(let text): bindings.append(text)
            case .integer(let number): bindings.append(Int(number))
            default: preconditionFailure("no search statement binds \(argument)")
            }
        }
        return PostgresQuery(unsafeSQL: change(statement.sql), binds: bindings)
    }

    /// The size of each schema's GIN index on its airports, as `pg_size_pretty` prints it.
    private func searchIndexSizes(_ schemas: [String]) async throws -> [String] {
        var sizes: [String] = []
        for schema in schemas {
            var bindings = PostgresBindings()
            bindings.append(schema)
            let found = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT pg_size_pretty(sum(pg_relation_size(i.indexrelid))) FROM pg_index AS i "
                        + "JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_am AS a ON a.oid = c.relam "
                        + "WHERE a.amname = 'gin' AND c.relnamespace = (SELECT oid FROM pg_namespace "
                        + "WHERE nspname = $1)", binds: bindings),
                logger: logger)
            for try await size in found.decode(String.self) { sizes.append(size) }
        }
        return sizes
    }
}
