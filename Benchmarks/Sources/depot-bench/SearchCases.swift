import BenchHarness
import Depot
import DepotSQL
import DepotSQLite
import Foundation
import GRDBSQLite

// Search through an index (issue #27 item 5): `.matches(\.name, query)` on a store whose names
// have a search index (`.createSearchIndex`), counted, and fetched 20 best first by `.relevance`,
// against Depot's scan (`.contains(\.name, word, .caseInsensitive)` for each query word, folding
// every row; its fetch ordered by the same relevance), against SQLite's own full-text search
// (FTS5 over the same names, external content) used by hand in C, and against the statements
// Depot renders run by hand in C on Depot's file.
// The rows are GeoCases' (the bundled airports, then jittered copies with distinct keys: the same
// names again and again). The databases are seeded once per size, and seeding measures the
// one-time costs: inserting the rows into a table with the index (its triggers) and without,
// building the index over rows already there (the migration step), FTS5 building its index over
// them and FTS5 kept by triggers. Rounds alternate the sides. Depot's answers must equal
// TextSearch's definition computed here (the matching rows, and the 20 best by whole words, then
// length, then key); FTS5's are compared loosely (its tokenizer ends a word at any character that
// is not a letter or digit, and folds case by its own table), and the scan's are a superset
// (a word prefix is a substring; a substring need not start a word).

extension RawDatabase {
    /// Binds Depot's arguments to `statement`, from parameter 1.
    static func bind(_ statement: OpaquePointer?, values: [StoredValue]) {
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, position)
            case .text(let text): bind(statement, position, text)
            case .integer(let number): sqlite3_bind_int64(statement, position, number)
            case .double(let number): sqlite3_bind_double(statement, position, number)
            // Text operators compare bytes on SQLite: their needle binds as a blob.
            case .blob(let bytes):
                _ = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), transient)
                }
            default: preconditionFailure("no search statement binds \(value)")
            }
        }
    }

    /// The airports `statement` selects (the columns of ``selectAll``, in its order).
    func airports(_ statement: SQLStatement) -> [BenchAirport] {
        let prepared = prepare(statement.sql)
        Self.bind(prepared, values: statement.arguments)
        var rows: [BenchAirport] = []
        while sqlite3_step(prepared) == SQLITE_ROW {
            rows.append(
                BenchAirport(
                    icao: Self.text(prepared, 0) ?? "", iata: Self.text(prepared, 1),
                    name: Self.text(prepared, 2) ?? "", city: Self.text(prepared, 3),
                    country: Self.text(prepared, 4) ?? "", elevation: sqlite3_column_double(prepared, 5),
                    latitude: sqlite3_column_double(prepared, 6), longitude: sqlite3_column_double(prepared, 7)))
        }
        sqlite3_finalize(prepared)
        return rows
    }

    /// The first column of the first row `statement` returns, as a whole number.
    func count(_ statement: SQLStatement) -> Int {
        let prepared = prepare(statement.sql)
        Self.bind(prepared, values: statement.arguments)
        sqlite3_step(prepared)
        let count = Int(sqlite3_column_int64(prepared, 0))
        sqlite3_finalize(prepared)
        return count
    }

    /// The first column of every row `sql` returns, as text.
    func texts(_ sql: String) -> [String] {
        let prepared = prepare(sql)
        var texts: [String] = []
        while sqlite3_step(prepared) == SQLITE_ROW { texts.append(Self.text(prepared, 0) ?? "") }
        sqlite3_finalize(prepared)
        return texts
    }

    /// What `EXPLAIN QUERY PLAN` says of `statement` (its detail lines).
    func searchPlan(_ statement: SQLStatement) -> [String] {
        let prepared = prepare("EXPLAIN QUERY PLAN " + statement.sql)
        Self.bind(prepared, values: statement.arguments)
        var details: [String] = []
        while sqlite3_step(prepared) == SQLITE_ROW { details.append(Self.text(prepared, 3) ?? "") }
        sqlite3_finalize(prepared)
        return details
    }
}

enum SearchCases {
    /// A rare word prefix, two two-word queries, and two prefixes of words most names hold.
    static let queries = ["gard", "osl gard", "san jos", "air", "int"]
    static let limit = 20
    static let batch = 50_000
    /// How long one side's calls last in a round of ``measure(_:rounds:floorOf:_:)``, at least, in
    /// milliseconds (a slower call runs once).
    static let roundLength = 20.0

    static let migrations = Migrations([
        Migration("1 airports", [.createTable(BenchAirport.self)]),
        Migration("2 search names", [.createSearchIndex(BenchAirport.self, \.name)]),
    ])
    static let wordTable = "airports#name#words"
    /// The index's terms as `fts5vocab` lists them, in `schema` (each term once: `vocab`; each
    /// term in each row: `instance`).
    static func vocabulary(_ schema: String, _ kind: String) -> String {
        "CREATE VIRTUAL TABLE temp.\"\(schema)_\(kind)\" USING fts5vocab(\(schema), '\(wordTable)', '\(kind)')"
    }
    /// The index's terms, postings, total term length and a checksum (after ``vocabulary(_:_:)``).
    static func wordSummary(_ schema: String) -> String {
        "SELECT count(*) || ' terms, ' || sum(doc) || ' postings, ' || total(length(term)) || ' ' "
            + "|| total(unicode(term) * doc) FROM temp.\"\(schema)_row\""
    }

    /// FTS5 over the names of the raw table (external content: the rows stay in `airports`),
    /// with prefix indexes for the query words' lengths, and the statement that fills it from
    /// the rows there are.
    static let createFTS =
        "CREATE VIRTUAL TABLE \"airports_fts\" USING fts5(\"name\", content = 'airports', content_rowid = 'rowid', "
        + "tokenize = 'unicode61 remove_diacritics 0', prefix = '2 3 4')"
    static let rebuildFTS = "INSERT INTO \"airports_fts\" (\"airports_fts\") VALUES ('rebuild')"
    /// The triggers that keep FTS5 current, as its documentation writes them for external content.
    static let ftsTriggers: [String] = {
        let add = "INSERT INTO \"airports_fts\" (rowid, \"name\") VALUES (new.rowid, new.\"name\");"
        let remove =
            "INSERT INTO \"airports_fts\" (\"airports_fts\", rowid, \"name\") "
            + "VALUES ('delete', old.rowid, old.\"name\");"
        return [
            "CREATE TRIGGER \"airports_fts_insert\" AFTER INSERT ON \"airports\" BEGIN \(add) END",
            "CREATE TRIGGER \"airports_fts_delete\" AFTER DELETE ON \"airports\" BEGIN \(remove) END",
            "CREATE TRIGGER \"airports_fts_update\" AFTER UPDATE ON \"airports\" BEGIN \(remove) \(add) END",
        ]
    }()

    /// The FTS5 query for Depot's query words: each a prefix, all of them (`"osl"* "gard"*`).
    static func ftsQuery(_ tokens: [String]) -> String {
        tokens.map { "\"\($0)\"*" }.joined(separator: " ")
    }

    static func ftsCount(_ tokens: [String]) -> SQLStatement {
        SQLStatement(
            sql: "SELECT count(*) FROM \"airports_fts\" WHERE \"airports_fts\" MATCH ?",
            arguments: [.text(ftsQuery(tokens))])
    }

    /// The `limit` best matches by `order` (`rank`, FTS5's bm25, or `rowid`), then their rows.
    static func ftsFetch(_ tokens: [String], by order: String) -> SQLStatement {
        let columns = ["icao", "iata", "name", "city", "country", "elevation", "lat", "lon"]
        return SQLStatement(
            sql: "SELECT " + columns.map { "a.\"\($0)\"" }.joined(separator: ", ")
                + " FROM (SELECT rowid, rank FROM \"airports_fts\" WHERE \"airports_fts\" MATCH ? ORDER BY \(order) "
                + "LIMIT \(limit)) AS f JOIN \"airports\" AS a ON a.rowid = f.rowid ORDER BY f.\(order)",
            arguments: [.text(ftsQuery(tokens))])
    }

    /// Today's scan: the name holds each query word, case folded (`instr(depot_fold("name"), ?)`).
    static func scan(_ tokens: [String]) -> Filter<BenchAirport> {
        tokens.dropFirst().reduce(Filter.contains(\.name, tokens[0], .caseInsensitive)) {
            $0 && .contains(\.name, $1, .caseInsensitive)
        }
    }

    /// The statements a store of `dialect` renders for the count and the fetch of `filter`.
    static func depotSQL(
        _ filter: Filter<BenchAirport>, _ order: Ordering<BenchAirport>, dialect: any SQLDialect = SQLiteDialect()
    ) -> (count: SQLStatement, fetch: SQLStatement) {
        let renderer = SQLRenderer(dialect: dialect)
        let table = BenchAirport.schema.table
        return (
            renderer.count(SelectQuery(table: table, predicate: filter.node)),
            renderer.select(SelectQuery(table: table, predicate: filter.node, ordering: [order.term], limit: limit))
        )
    }

    /// TextSearch's definition over the rows, computed once per distinct name: the matches of a
    /// query, and the best of them as `.relevance` orders them.
    struct Reference {
        let rows: [BenchAirport]
        /// Each row's name, as an index into `words`.
        let nameOf: [Int]
        /// The words of each distinct name, and its length in Unicode scalars.
        let words: [[String]]
        let lengths: [Int]

        init(_ rows: [BenchAirport]) {
            var numbers: [String: Int] = [:]
            var words: [[String]] = []
            var lengths: [Int] = []
            self.nameOf = rows.map { row in
                if let number = numbers[row.name] { return number }
                numbers[row.name] = words.count
                words.append(TextSearch.words(of: row.name))
                lengths.append(row.name.unicodeScalars.count)
                return words.count - 1
            }
            self.rows = rows
            self.words = words
            self.lengths = lengths
        }

        /// The rows matching `tokens`, in table order.
        func matches(_ tokens: [String]) -> [Int] {
            let matching = words.map { words in
                tokens.allSatisfy { token in words.contains { TextFolding.hasPrefixBytes($0, token) } }
            }
            return rows.indices.filter { matching[nameOf[$0]] }
        }

        /// The keys of the `limit` best of `matched`: most whole query words, then shortest name,
        /// then key (bytewise).
        func best(_ matched: [Int], _ tokens: [String], limit: Int) -> [String] {
            let wanted = Set(tokens)
            let exact = words.map { $0.filter(wanted.contains).count }
            // Most whole words first, then shortest (names are far shorter than 100,000 scalars).
            func rank(_ row: Int) -> Int { -exact[nameOf[row]] * 100_000 + lengths[nameOf[row]] }
            // Whole ranks, best first, until they hold `limit` rows; then those rows in order.
            var chosen: [Int] = []
            let ranks = Set(matched.map(rank)).sorted()
            for wantedRank in ranks where chosen.count < limit {
                chosen += matched.filter { rank($0) == wantedRank }
            }
            return chosen.sorted { left, right in
                let (leftRank, rightRank) = (rank(left), rank(right))
                if leftRank != rightRank { return leftRank < rightRank }
                return rows[left].icao.utf8.lexicographicallyPrecedes(rows[right].icao.utf8)
            }.prefix(limit).map { rows[$0].icao }
        }
    }

    static func caseNames(_ query: String) -> (count: String, fetch: String) {
        ("search index count \"\(query)\"", "search index fetch \(limit) \"\(query)\"")
    }
    static let insertName = "search index insert n rows (triggers)"
    static let ftsInsertName = "search index insert n rows, FTS5 by hand"
    static let buildName = "search index build over n rows"

    /// Inserts `rows` through Depot in batches of ``batch``.
    static func insert(_ rows: [BenchAirport], into store: SQLiteStore) async throws {
        let repository = store.repository(BenchAirport.self)
        for start in stride(from: 0, to: rows.count, by: batch) {
            try await repository.insert(Array(rows[start..<min(start + batch, rows.count)]))
        }
    }

    /// The one-time costs of one round, in milliseconds, and the databases it made.
    struct Seeding {
        var depotWithIndex = 0.0
        var depotWithout = 0.0
        var depotBuild = 0.0
        var rawWithout = 0.0
        var ftsBuild = 0.0
        var rawWithFTS = 0.0
        /// Depot's file whose index the migration built over the rows (measured), the one whose
        /// triggers filled it, and raw C's with FTS5 built over the rows (measured).
        var built = ""
        var triggered = ""
        var raw = ""
    }

    /// One round of the one-time costs, on fresh files: Depot inserting into a table with the
    /// index and without, then building it over the rows there are; raw C inserting, then
    /// building FTS5, and inserting into a table whose FTS5 triggers fill it.
    @MainActor
    static func seed(_ table: [BenchAirport]) async throws -> Seeding {
        var seeding = Seeding()
        seeding.triggered = scratchPath()
        do {
            let store = try SQLiteStore(path: seeding.triggered)
            try await store.migrate(migrations)
            seeding.depotWithIndex = try await BenchHarness.time { try await insert(table, into: store) }
        }
        seeding.built = scratchPath()
        do {
            let store = try SQLiteStore(path: seeding.built)
            try await store.migrate(migrations, to: 1)
            seeding.depotWithout = try await BenchHarness.time { try await insert(table, into: store) }
            seeding.depotBuild = try await BenchHarness.time { try await store.migrate(migrations) }
        }
        seeding.raw = scratchPath()
        do {
            let raw = RawDatabase(path: seeding.raw)
            seeding.rawWithout = await BenchHarness.time { raw.write(table, upsert: false) }
            seeding.ftsBuild = await BenchHarness.time {
                raw.execute(createFTS)
                raw.execute(rebuildFTS)
            }
        }
        let triggeredFTS = scratchPath()
        defer { removeDatabase(triggeredFTS) }
        let raw = RawDatabase(path: triggeredFTS)
        raw.execute(createFTS)
        for trigger in ftsTriggers { raw.execute(trigger) }
        seeding.rawWithFTS = await BenchHarness.time { raw.write(table, upsert: false) }
        return seeding
    }

    @MainActor
    static func run(n: Int, base: [BenchAirport], rounds: Int? = nil) async throws -> [BenchResult] {
        let wanted = queries.filter { query in
            let names = caseNames(query)
            return selected(names.count) || selected(names.fetch)
        }
        let costs = [insertName, ftsInsertName, buildName].filter(selected)
        if wanted.isEmpty && costs.isEmpty { return [] }
        let rounds = rounds ?? (n >= 1_000_000 ? 7 : 11)
        let json = CommandLine.arguments.contains("--json")
        func say(_ line: String) { if !json { print(line) } }

        let options = RawDatabase(path: ":memory:").texts("PRAGMA compile_options")
        precondition(options.contains("ENABLE_FTS5"), "SQLite here has no FTS5: \(options)")
        let table = GeoCases.rows(base, count: n)
        let reference = Reference(table)

        // The one-time costs: three rounds up to 100,000 rows, one above; the last round's files
        // are the ones queried.
        let writeRounds = n <= 100_000 ? 3 : 1
        var seedings: [Seeding] = []
        for round in 0..<writeRounds {
            let seeding = try await seed(table)
            if round < writeRounds - 1 {
                for path in [seeding.built, seeding.triggered, seeding.raw] { removeDatabase(path) }
            }
            seedings.append(seeding)
        }
        let seeded = seedings[seedings.count - 1]
        defer { for path in [seeded.built, seeded.raw] { removeDatabase(path) } }
        func median(_ cost: KeyPath<Seeding, Double>) -> Double {
            BenchHarness.median(seedings.map { $0[keyPath: cost] })
        }

        // The migration's index and the triggers' must hold the same words; then the file they
        // filled goes. Sizes are the databases' pages (WAL included).
        let depotRaw = RawDatabase.withDepotFunctions(path: seeded.built)
        let raw = RawDatabase(path: seeded.raw)
        let postings: Int
        do {
            // Both files inserted the same rows in the same order: the same rowids.
            depotRaw.execute("ATTACH DATABASE '\(seeded.triggered)' AS \"triggered\"")
            for schema in ["main", "triggered"] { depotRaw.execute(vocabulary(schema, "row")) }
            let (built, filled) = (depotRaw.texts(wordSummary("main")), depotRaw.texts(wordSummary("triggered")))
            precondition(
                built == filled, "search index: the migration's words \(built) differ from the triggers' \(filled)")
            if n <= 200_000 {
                for schema in ["main", "triggered"] { depotRaw.execute(vocabulary(schema, "instance")) }
                let differing = depotRaw.count(
                    SQLStatement(
                        sql: "SELECT count(*) FROM (SELECT term, doc FROM temp.\"main_instance\" EXCEPT "
                            + "SELECT term, doc FROM temp.\"triggered_instance\")"))
                precondition(differing == 0, "search index: \(differing) words of the migration's not the triggers'")
            }
            postings = depotRaw.count(SQLStatement(sql: "SELECT sum(doc) FROM temp.\"main_row\""))
            for table in ["main_row", "triggered_row", "main_instance", "triggered_instance"] {
                depotRaw.execute("DROP TABLE IF EXISTS temp.\"\(table)\"")
            }
            depotRaw.execute("DETACH DATABASE \"triggered\"")
            say("(search index, \(n) rows: the migration's words and the triggers' agree: \(built.first ?? ""))")
        }
        removeDatabase(seeded.triggered)
        let size = "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
        say(
            String(
                format: "(search index, %d rows, SQLite %@: Depot inserts them in %.0f ms into a table with the "
                    + "index, %.0f ms without, builds the index over them in %.0f ms (%d postings); raw C "
                    + "inserts them in %.0f ms, builds FTS5 in %.0f ms, inserts them with FTS5 triggers in %.0f ms; "
                    + "files: Depot's %.1f MB, raw C's with FTS5 %.1f MB; medians of %d)",
                n, raw.texts("SELECT sqlite_version()").first ?? "?", median(\.depotWithIndex),
                median(\.depotWithout), median(\.depotBuild), postings, median(\.rawWithout), median(\.ftsBuild),
                median(\.rawWithFTS), Double(depotRaw.count(SQLStatement(sql: size))) / 1e6,
                Double(raw.count(SQLStatement(sql: size))) / 1e6, writeRounds))

        var results: [BenchResult] = []
        func record(_ name: String, subject: String, _ medians: [Double], baselines: [String], floor: Double? = nil) {
            results += SearchCases.results(
                name, backend: "sqlite", n: n, subject: subject, medians, baselines: baselines, floor: floor)
        }
        if selected(insertName) {
            record(
                insertName, subject: "depot-with-index",
                [median(\.depotWithIndex), median(\.depotWithout), median(\.rawWithFTS)],
                baselines: ["depot-no-index", "raw-c-fts5-triggers"])
        }
        if selected(ftsInsertName) {
            record(
                ftsInsertName, subject: "raw-c-with-fts5", [median(\.rawWithFTS), median(\.rawWithout)],
                baselines: ["raw-c-no-index"])
        }
        if selected(buildName) {
            record(
                buildName, subject: "depot-migrate", [median(\.depotBuild), median(\.ftsBuild)],
                baselines: ["raw-c-fts5-build"])
        }

        let store = try SQLiteStore(path: seeded.built)
        let depot = store.repository(BenchAirport.self)
        for query in wanted {
            let names = caseNames(query)
            let tokens = TextSearch.tokens(of: query, .caseInsensitive)
            let matches = Filter<BenchAirport>.matches(\.name, query)
            let relevance = Ordering<BenchAirport>.relevance(\.name, to: query)
            let scanned = scan(tokens)
            let sql = depotSQL(matches, relevance)
            let scanSQL = depotSQL(scanned, relevance)
            let matched = reference.matches(tokens)
            // What SQLite plans for Depot's statements on Depot's file; for the first query, also
            // for the scan's and for FTS5's.
            var plans = [("depot count", depotRaw, sql.count), ("depot fetch", depotRaw, sql.fetch)]
            if query == wanted.first {
                plans += [
                    ("scan count", depotRaw, scanSQL.count), ("scan fetch", depotRaw, scanSQL.fetch),
                    ("fts5 count", raw, ftsCount(tokens)), ("fts5 fetch", raw, ftsFetch(tokens, by: "rank")),
                ]
            }
            for (label, database, statement) in plans {
                say("(plan, \(label) \"\(query)\": \(database.searchPlan(statement).joined(separator: "; ")))")
            }
            if selected(names.count) {
                let (medians, answers, floor) = try await measure(
                    names.count, rounds: rounds, floorOf: 2,
                    [
                        { @Sendable in try await depot.count(where: matches) },
                        { @Sendable in try await depot.count(where: scanned) },
                        { @Sendable in raw.count(ftsCount(tokens)) },
                        { @Sendable in depotRaw.count(sql.count) },
                    ])
                precondition(
                    answers[0] == matched.count && answers[3] == answers[0],
                    "\(names.count): Depot counts \(answers[0]) (by hand \(answers[3])), TextSearch \(matched.count)")
                precondition(answers[1] >= answers[0], "\(names.count): the scan found fewer rows than the index")
                say(
                    "(\(names.count): \(answers[0]) rows (TextSearch's definition: \(matched.count)); "
                        + "the scan for substrings \(answers[1]); FTS5 \(answers[2])"
                        + (answers[2] == answers[0]
                            ? ")"
                            : String(format: ", %+.2f%%)", Double(answers[2] - answers[0]) * 100 / Double(answers[0]))))
                record(
                    names.count, subject: "depot-indexed", medians,
                    baselines: ["depot-scan", "raw-c-fts5", "raw-c-depot-sql"], floor: floor)
            }
            if selected(names.fetch) {
                let (medians, answers, floor) = try await measure(
                    names.fetch, rounds: rounds, floorOf: 2,
                    [
                        { @Sendable in try await depot.fetch(where: matches, orderBy: [relevance], limit: limit) },
                        { @Sendable in try await depot.fetch(where: scanned, orderBy: [relevance], limit: limit) },
                        { @Sendable in raw.airports(ftsFetch(tokens, by: "rank")) },
                        { @Sendable in raw.airports(ftsFetch(tokens, by: "rowid")) },
                        { @Sendable in depotRaw.airports(sql.fetch) },
                    ])
                let expected = reference.best(matched, tokens, limit: limit)
                precondition(
                    answers[0].map(\.icao) == expected && answers[4] == answers[0],
                    "\(names.fetch): Depot's best \(answers[0].map(\.icao)) (by hand \(answers[4].map(\.icao))), "
                        + "TextSearch's \(expected)")
                func shown(_ rows: [BenchAirport]) -> String { rows.prefix(4).map(\.icao).joined(separator: ", ") }
                func named(_ rows: [BenchAirport]) -> String {
                    Set(rows.map(\.name)).sorted().prefix(3).joined(separator: " | ")
                }
                say(
                    "(\(names.fetch): Depot \(shown(answers[0])) … (\(named(answers[0]))); the scan "
                        + "\(shown(answers[1])) …; FTS5 by bm25 \(shown(answers[2])) … (\(named(answers[2]))); "
                        + "FTS5 by rowid \(shown(answers[3])) …)")
                record(
                    names.fetch, subject: "depot-indexed", medians,
                    baselines: ["depot-scan", "raw-c-fts5-bm25", "raw-c-fts5-rowid", "raw-c-depot-sql"], floor: floor)
            }
        }
        return results
    }

    /// One result per baseline: `medians[0]` is the subject's, `medians[i + 1]` baseline i's.
    nonisolated static func results(
        _ name: String, backend: String, n: Int, subject: String, _ medians: [Double], baselines: [String],
        floor: Double?
    ) -> [BenchResult] {
        baselines.enumerated().map { index, baseline in
            var result = BenchResult(
                case: name, backend: backend, n: n, subject: subject, medianMilliseconds: medians[0],
                baseline: baseline, baselineMedianMilliseconds: medians[index + 1])
            result.floor = floor
            return result
        }
    }

    /// Runs the sides alternately (one warm-up round, then `rounds` timed ones, the order
    /// rotating), and the side `floorOf` once more as its own A/A pair; returns each side's median
    /// milliseconds per call and answer, in the order of `sides`, and the A/A floor. Every side
    /// must answer the same in every round.
    ///
    /// A side whose call takes under ``roundLength`` is called repeatedly within a round, as many
    /// times as one call (timed before the rounds) fits in it: one call of a tenth of a
    /// millisecond, timed alone, measures the scheduler more than the query.
    ///
    /// The sides run in a task off the main actor: a call from the main actor to Depot hops to
    /// the shared threads and back (two thread switches, ~0.1 ms here), a cost of the caller's
    /// isolation, not of the query; the README states it apart.
    static func measure<Answer: Equatable & Sendable>(
        _ name: String, rounds: Int, floorOf: Int, _ sides: [@Sendable () async throws -> Answer]
    ) async throws -> (medians: [Double], answers: [Answer], floor: Double?) {
        try await Task.detached { try await measureHere(name, rounds: rounds, floorOf: floorOf, sides) }.value
    }

    /// ``measure(_:rounds:floorOf:_:)`` on the calling task.
    nonisolated(nonsending) static func measureHere<Answer: Equatable & Sendable>(
        _ name: String, rounds: Int, floorOf: Int, _ sides: [@Sendable () async throws -> Answer]
    ) async throws -> (medians: [Double], answers: [Answer], floor: Double?) {
        let all = sides + [sides[floorOf]]
        var calls: [Int] = []
        for side in all {
            _ = try await side()
            let once = try await BenchHarness.time { _ = try await side() }
            calls.append(max(1, min(1_000, Int(roundLength / max(once, 0.001)))))
        }
        let runs = try await BenchHarness.interleave(
            rounds: rounds,
            zip(all, calls).map { side, calls in
                {
                    var answer: Answer?
                    let time = try await BenchHarness.time {
                        for _ in 0..<calls { answer = try await side() }
                    }
                    return (time: time / Double(calls), answer: answer)
                }
            })
        var answers: [Answer] = []
        for (index, side) in runs.enumerated() {
            guard let answer = side[0].answer, side.allSatisfy({ $0.answer == answer }) else {
                preconditionFailure("\(name): side \(index) answered differently in different rounds")
            }
            answers.append(answer)
        }
        let medians = runs.map { side in BenchHarness.median(side.map(\.time)) }
        return (
            Array(medians.dropLast()), Array(answers.dropLast()),
            BenchHarness.floor(again: medians[sides.count], baseline: medians[floorOf])
        )
    }
}
