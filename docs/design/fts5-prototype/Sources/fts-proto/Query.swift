import CFTS
import DepotText
import Foundation

/// 2d: the queries, on one file holding the raw table, FTS5 indexes (built by 'rebuild') and
/// Depot's current word table (built by its migration's statements).
enum QueryBench {
    static let queries = ["gard", "osl gard", "san jos", "int", "air"]
    static let limit = 20

    static func prefixQuery(_ tokens: [String]) -> String { tokens.map { "\"\($0)\"*" }.joined(separator: " AND ") }
    static func anyExact(_ tokens: [String]) -> String { "(" + tokens.map { "\"\($0)\"" }.joined(separator: " OR ") + ")" }

    /// Depot's relevance order over FTS5's candidates, in two tiers: rows with at least one
    /// whole query word (counted by whole-word FTS5 lookups), then, only if fewer than `limit`,
    /// rows with none (by length, key).
    static func depotTop(_ db: DB, _ table: String, _ tokens: [String]) -> [String] {
        // One token: every row of the first tier has one whole word (a bare 1 would name a column).
        let exact =
            tokens.count == 1
            ? ""
            : tokens.indices.map { "(a.rowid IN (SELECT rowid FROM \(table) WHERE \(table) MATCH ?\($0 + 2)))" }
                .joined(separator: " + ") + " DESC, "
        let first = db.rows(
            "SELECT a.icao FROM airports AS a WHERE a.rowid IN (SELECT rowid FROM \(table) WHERE \(table) MATCH ?1) "
                + "ORDER BY \(exact)length(a.name), a.icao LIMIT \(limit)",
            ["\(anyExact(tokens)) AND \(prefixQuery(tokens))"] + (tokens.count == 1 ? [] : tokens.map { "\"\($0)\"" })
        ).map { $0[0]! }
        guard first.count < limit else { return first }
        let rest = db.rows(
            "SELECT a.icao FROM airports AS a WHERE a.rowid IN (SELECT rowid FROM \(table) WHERE \(table) MATCH ?1) "
                + "ORDER BY length(a.name), a.icao LIMIT \(limit - first.count)",
            ["(\(prefixQuery(tokens))) NOT \(anyExact(tokens))"]
        ).map { $0[0]! }
        return first + rest
    }

    /// Depot's relevance computed in Swift over every candidate FTS5 returns (the simple way).
    static func swiftTop(_ db: DB, _ table: String, _ tokens: [String]) -> [String] {
        let rows = db.rows(
            "SELECT a.icao, a.name FROM airports AS a WHERE a.rowid IN (SELECT rowid FROM \(table) WHERE \(table) MATCH ?)",
            [prefixQuery(tokens)])
        let ranked = rows.map { row -> (Int, Int, String) in
            let name = row[1]!
            return (-TextSearch.exactWords(name, tokens: tokens, .caseInsensitive), name.unicodeScalars.count, row[0]!)
        }
        return ranked.sorted { l, r in
            if l.0 != r.0 { return l.0 < r.0 }
            if l.1 != r.1 { return l.1 < r.1 }
            return l.2.utf8.lexicographicallyPrecedes(r.2.utf8)
        }.prefix(limit).map(\.2)
    }

    static func bm25Top(_ db: DB, _ table: String, _ match: String) -> [String] {
        db.rows(
            "SELECT a.icao FROM (SELECT rowid, rank FROM \(table) WHERE \(table) MATCH ? ORDER BY rank LIMIT \(limit)) AS f "
                + "JOIN airports AS a ON a.rowid = f.rowid ORDER BY f.rank", [match]
        ).map { $0[0]! }
    }

    /// The statements Depot renders today for `.matches` (count) and `.relevance` (fetch), on its word table.
    static let words = "\"airports#name#words\""
    static func wordTableWhere(_ tokens: [String]) -> String {
        tokens.indices.map {
            "\"icao\" IN (SELECT \"key\" FROM \(words) WHERE \"word\" >= ?\(2 * $0 + 1) AND \"word\" < ?\(2 * $0 + 2))"
        }.joined(separator: " AND ")
    }
    static func wordTableArguments(_ tokens: [String]) -> [String] { tokens.flatMap { [$0, $0 + "\u{10FFFF}"] } }
    static func wordTableCount(_ db: DB, _ tokens: [String]) -> Int {
        db.int("SELECT count(*) FROM \"airports\" WHERE \(wordTableWhere(tokens))", wordTableArguments(tokens))
    }
    static func wordTableTop(_ db: DB, _ tokens: [String]) -> [String] {
        let base = 2 * tokens.count
        let list = tokens.indices.map { "?\(base + $0 + 1)" }.joined(separator: ", ")
        return db.rows(
            "SELECT \"airports\".\"icao\" FROM \"airports\" WHERE \(wordTableWhere(tokens)) ORDER BY "
                + "(SELECT count(*) FROM \(words) AS depot_w WHERE depot_w.\"key\" = \"airports\".\"icao\" AND depot_w.\"word\" IN (\(list))) DESC, "
                + "length(\"airports\".\"name\"), \"airports\".\"icao\" LIMIT \(limit)",
            wordTableArguments(tokens) + tokens
        ).map { $0[0]! }
    }

    static func run(rows: [Airport], dir: String, repetitions: Int, scanRepetitions: Int) {
        let path = "\(dir)/query.sqlite"
        let exists = FileManager.default.fileExists(atPath: path)
        let db = DB(path)
        if !exists {
            db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            db.exec(createTable)
            db.exec("BEGIN")
            insert(rows, into: db)
            db.exec("COMMIT")
            for fts in indexes where !["fts_u", "fts_d0", "fts_dn0"].contains(fts.table) {
                let ms = measure { db.exec(fts.create); db.exec(fts.rebuild) }
                print("built \(fts.table) in \(fmt(ms)) ms")
            }
            let ms = measure {
                db.exec("BEGIN")
                for statement in wordTableBuild { db.exec(statement) }
                db.exec("COMMIT")
            }
            print("built word table in \(fmt(ms)) ms")
            db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            db.exec("ANALYZE")
        }
        let reference = Reference(rows)
        func time<T>(_ reps: Int, _ body: () -> T) -> (ms: Double, value: T) {
            var value = body()  // warm-up
            var times: [Double] = []
            for _ in 0..<reps { times.append(measure { value = body() }) }
            return (median(times), value)
        }
        print("\n| query | matching (TextSearch) | measure | ms (median) | result check |")
        let only = arguments.firstIndex(of: "--queries").map { arguments[$0 + 1].split(separator: ",").map(String.init) }
        for query in only ?? queries {
            let tokens = TextSearch.tokens(of: query, .caseInsensitive)
            let matched = reference.matches(tokens)
            let best = reference.best(matched, tokens, limit: limit)
            let match = prefixQuery(tokens)
            func line(_ what: String, _ ms: Double, _ check: String) {
                print("| \(query) | \(matched.count) | \(what) | \(fmt(ms)) | \(check) |")
            }
            for table in ["fts_d", "fts_dp", "fts_dn", "fts_up"] {
                let (ms, count) = time(repetitions) { db.int("SELECT count(*) FROM \(table) WHERE \(table) MATCH ?", [match]) }
                line("count \(table)", ms, count == matched.count ? "= \(count)" : "DIFF \(count)")
            }
            let (wc, wcount) = time(repetitions) { wordTableCount(db, tokens) }
            line("count Depot word table (today)", wc, wcount == matched.count ? "= \(wcount)" : "DIFF \(wcount)")
            let (ic, icount) = time(scanRepetitions) {
                db.int(
                    "SELECT count(*) FROM airports WHERE " + tokens.map { "instr(lower(name), '\($0)') > 0" }.joined(separator: " AND "))
            }
            line("count scan instr(lower(name)) (substring, ASCII case: a cheap superset)", ic, "\(icount)")
            let (sc, scount) = time(scanRepetitions) {
                db.int("SELECT count(*) FROM airports WHERE depot_match(name, ?)", [tokens.joined(separator: " ")])
            }
            line("count scan depot_match()", sc, scount == matched.count ? "= \(scount)" : "DIFF \(scount)")
            for table in ["fts_d", "fts_dp", "fts_dn"] {
                let (ms, top) = time(repetitions) { depotTop(db, table, tokens) }
                line("top 20 Depot relevance, \(table) tiers", ms, top == best ? "= TextSearch" : "DIFF \(top.prefix(5))")
            }
            let (sw, swtop) = time(repetitions) { swiftTop(db, "fts_dp", tokens) }
            line("top 20 Depot relevance, fts_dp candidates ranked in Swift", sw, swtop == best ? "= TextSearch" : "DIFF")
            let (wt, wtop) = time(repetitions) { wordTableTop(db, tokens) }
            line("top 20 Depot relevance, word table (today)", wt, wtop == best ? "= TextSearch" : "DIFF \(wtop.prefix(5))")
            let (st, stop) = time(scanRepetitions) {
                db.rows(
                    "SELECT icao FROM airports WHERE depot_match(name, ?1) ORDER BY depot_exact(name, ?1) DESC, length(name), icao LIMIT \(limit)",
                    [tokens.joined(separator: " ")]
                ).map { $0[0]! }
            }
            line("top 20 Depot relevance, scan", st, stop == best ? "= TextSearch" : "DIFF")
            for table in ["fts_dp", "fts_up"] {
                let (ms, top) = time(repetitions) { bm25Top(db, table, match) }
                let overlap = Set(top).intersection(best).count
                line("top 20 bm25, \(table)", ms, "\(overlap)/20 in Depot's top 20")
            }
        }
        print("file bytes: \(db.bytes)")
        for name in ["airports", "sqlite_autoindex_airports_1"] + indexes.map(\.table) + ["airports#name#words"] {
            let bytes = db.int("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?1 OR name LIKE ?1 || '\\_%' ESCAPE '\\' OR name LIKE ?1 || '#%'", [name])
            print("dbstat \(name): \(bytes)")
        }
    }
}
