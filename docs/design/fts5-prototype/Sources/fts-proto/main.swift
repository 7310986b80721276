import CFTS
import DepotText
import Foundation

setvbuf(stdout, nil, _IOLBF, 0)
let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: String) -> String {
    if let index = arguments.firstIndex(of: name), index + 1 < arguments.count { return arguments[index + 1] }
    return fallback
}
let command = arguments.count > 1 ? arguments[1] : "check"
let n = Int(option("--n", "1000000"))!
let rounds = Int(option("--rounds", "3"))!
let dataDir = option("--dir", "/tmp/fts-proto/data")
try? FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)

func fresh(_ name: String) -> DB {
    let path = "\(dataDir)/\(name).sqlite"
    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let db = DB(path)
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    return db
}

/// An FTS5 index of `name` over `airports` (external content), and the triggers its
/// documentation writes to keep it current.
struct FTS {
    let label: String
    let table: String
    let options: String
    var create: String {
        "CREATE VIRTUAL TABLE \"\(table)\" USING fts5(\"name\", content = 'airports', content_rowid = 'rowid', \(options))"
    }
    var triggers: [String] {
        let add = "INSERT INTO \"\(table)\" (rowid, \"name\") VALUES (new.rowid, new.\"name\");"
        let remove = "INSERT INTO \"\(table)\" (\"\(table)\", rowid, \"name\") VALUES ('delete', old.rowid, old.\"name\");"
        return [
            "CREATE TRIGGER \"\(table)_insert\" AFTER INSERT ON \"airports\" BEGIN \(add) END",
            "CREATE TRIGGER \"\(table)_delete\" AFTER DELETE ON \"airports\" BEGIN \(remove) END",
            "CREATE TRIGGER \"\(table)_update\" AFTER UPDATE ON \"airports\" BEGIN \(remove) \(add) END",
        ]
    }
    var rebuild: String { "INSERT INTO \"\(table)\" (\"\(table)\") VALUES ('rebuild')" }
}

let indexes = [
    FTS(label: "FTS5 depot", table: "fts_d", options: "tokenize = 'depot'"),
    FTS(label: "FTS5 depot prefix='2 3'", table: "fts_dp", options: "tokenize = 'depot', prefix = '2 3'"),
    FTS(label: "FTS5 depot detail=none", table: "fts_dn", options: "tokenize = 'depot', detail = 'none'"),
    FTS(label: "FTS5 depot columnsize=0", table: "fts_d0", options: "tokenize = 'depot', columnsize = 0"),
    FTS(
        label: "FTS5 depot detail=none columnsize=0", table: "fts_dn0",
        options: "tokenize = 'depot', detail = 'none', columnsize = 0"),
    FTS(label: "FTS5 depot_ci (+diacritic-free colocated)", table: "fts_ci", options: "tokenize = 'depot_ci'"),
    FTS(label: "FTS5 unicode61", table: "fts_u", options: "tokenize = 'unicode61 remove_diacritics 0'"),
    FTS(
        label: "FTS5 unicode61 prefix='2 3 4' (depot-bench's)", table: "fts_up",
        options: "tokenize = 'unicode61 remove_diacritics 0', prefix = '2 3 4'"),
]

/// Depot's word table as `airports import` creates it for `name` (DDL copied from its .schema).
let wordTable: [String] = [
    "CREATE TABLE \"airports#name#words\" (\"word\" TEXT NOT NULL, \"plain\" TEXT NOT NULL, \"key\" TEXT NOT NULL, PRIMARY KEY (\"word\", \"key\")) WITHOUT ROWID",
    "CREATE INDEX \"airports#name#words#plain\" ON \"airports#name#words\" (\"plain\", \"key\")",
    "CREATE INDEX \"airports#name#words#key\" ON \"airports#name#words\" (\"key\")",
    "CREATE TRIGGER \"airports#name#words#insert\" AFTER INSERT ON \"airports\" BEGIN DELETE FROM \"airports#name#words\" WHERE \"key\" = NEW.\"icao\"; INSERT OR IGNORE INTO \"airports#name#words\" (\"word\", \"plain\", \"key\") SELECT value, depot_fold_diacritics(value), NEW.\"icao\" FROM json_each(depot_words(NEW.\"name\")); END",
    "CREATE TRIGGER \"airports#name#words#update\" AFTER UPDATE OF \"name\", \"icao\" ON \"airports\" BEGIN DELETE FROM \"airports#name#words\" WHERE \"key\" = OLD.\"icao\" OR \"key\" = NEW.\"icao\"; INSERT OR IGNORE INTO \"airports#name#words\" (\"word\", \"plain\", \"key\") SELECT value, depot_fold_diacritics(value), NEW.\"icao\" FROM json_each(depot_words(NEW.\"name\")); END",
    "CREATE TRIGGER \"airports#name#words#delete\" AFTER DELETE ON \"airports\" BEGIN DELETE FROM \"airports#name#words\" WHERE \"key\" = OLD.\"icao\"; END",
]
/// The migration's build over existing rows: the word table, its backfill, then the indexes and triggers.
let wordTableBuild: [String] = [
    wordTable[0],
    "INSERT OR IGNORE INTO \"airports#name#words\" (\"word\", \"plain\", \"key\") SELECT w.value, depot_fold_diacritics(w.value), t.\"icao\" FROM \"airports\" AS t, json_each(depot_words(t.\"name\")) AS w",
] + wordTable.dropFirst()

if arguments.contains("--swift-only") { cfts_swift_only = 1 }
let base = loadAirports()
print("sqlite \(String(cString: sqlite3_libversion())), \(base.count) airports")

switch command {
case "check":
    // 1. The tokenizer agrees with TextSearch.words on every airport name (via fts5vocab).
    let db = DB(":memory:")
    db.exec(createTable)
    db.exec("BEGIN")
    insert(base, into: db)
    db.exec("COMMIT")
    for fts in indexes where ["fts_d", "fts_ci", "fts_u"].contains(fts.table) {
        db.exec(fts.create)
        db.exec(fts.rebuild)
        db.exec("CREATE VIRTUAL TABLE \"\(fts.table)_v\" USING fts5vocab('\(fts.table)', 'instance')")
    }
    func vocab(_ table: String) -> [Int: Set<String>] {
        var sets: [Int: Set<String>] = [:]
        for row in db.rows("SELECT doc, term FROM \"\(table)_v\"") { sets[Int(row[0]!)!, default: []].insert(row[1]!) }
        return sets
    }
    let names = db.rows("SELECT rowid, name FROM airports").map { (Int($0[0]!)!, $0[1]!) }
    let depot = vocab("fts_d"), ci = vocab("fts_ci"), u61 = vocab("fts_u")
    var mismatches = 0, ciMismatches = 0, u61Differs = 0, marked = 0, tokens = 0, dups = 0
    for (rowid, name) in names {
        let words = TextSearch.words(of: name)
        tokens += words.count
        let expected = Set(words)
        if depot[rowid, default: []] != expected {
            mismatches += 1
            if mismatches <= 5 { print("MISMATCH \(rowid) \(name): \(depot[rowid, default: []]) vs \(expected)") }
        }
        let plains = Set(words.map(TextFolding.foldIgnoringDiacritics).filter { !$0.isEmpty }.map { "\u{1}" + $0 })
        let ciExpected = expected.union(plains.filter { !expected.contains(String($0.dropFirst())) || true }
            .filter { p in words.contains { TextFolding.foldIgnoringDiacritics($0) == String(p.dropFirst()) && $0 != String(p.dropFirst()) } })
        marked += ciExpected.count - expected.count
        if ci[rowid, default: []] != ciExpected {
            ciMismatches += 1
            if ciMismatches <= 5 { print("CI MISMATCH \(rowid) \(name): \(ci[rowid, default: []]) vs \(ciExpected)") }
        }
        if u61[rowid, default: []] != expected {
            u61Differs += 1
            if u61Differs <= 8 { print("unicode61 differs: \(name): \(u61[rowid, default: []].sorted()) vs depot \(words)") }
        }
        dups += TextFolding.fold(name).split(whereSeparator: { $0.unicodeScalars.allSatisfy(TextSearch.isSeparator) }).count > words.count ? 1 : 0
    }
    // The C fast path on random ASCII texts (letters, digits, punctuation, control characters).
    var generator = SplitMix64(state: 40)
    let alphabet = Array("aAbBzZ09 -'.,()/\t\u{1}_~Oslo ".unicodeScalars)
    let random: [String] = (0..<20_000).map { _ in
        var s = String.UnicodeScalarView()
        for _ in 0..<Int(generator.next() % 40) { s.append(alphabet[Int(generator.next() % UInt64(alphabet.count))]) }
        return String(s)
    }
    db.exec("CREATE TABLE r (t TEXT)")
    db.exec("CREATE VIRTUAL TABLE r_fts USING fts5(t, content = 'r', tokenize = 'depot')")
    db.exec("CREATE VIRTUAL TABLE r_v USING fts5vocab('r_fts', 'instance')")
    let statement = db.prepare("INSERT INTO r (rowid, t) VALUES (?, ?)")
    for (index, text) in random.enumerated() {
        sqlite3_bind_int64(statement, 1, Int64(index + 1)); bind(statement, 2, text)
        sqlite3_step(statement); sqlite3_reset(statement)
    }
    sqlite3_finalize(statement)
    db.exec("INSERT INTO r_fts (r_fts) VALUES ('rebuild')")
    var randomSets: [Int: Set<String>] = [:]
    for row in db.rows("SELECT doc, term FROM r_v") { randomSets[Int(row[0]!)!, default: []].insert(row[1]!) }
    let randomMismatches = random.enumerated().filter { randomSets[$0.offset + 1, default: []] != Set(TextSearch.words(of: $0.element)) }.count
    print("random ASCII texts: \(random.count), word-set mismatches \(randomMismatches) (fast path \(cfts_swift_only == 0 ? "on" : "off"))")
    print("rows \(names.count): depot tokenizer word-set mismatches \(mismatches); depot_ci mismatches \(ciMismatches) (marked forms \(marked) over \(tokens) words); unicode61 differs on \(u61Differs) rows")
    // Query side: a prefix query through the tokenizer equals TextSearch.matches over the 28k.
    let reference = Reference(base)
    for query in ["gard", "osl gard", "san jos", "int", "air", "são paulo", "zürich", "straße", "o'hare", "ß"] {
        let tokens = TextSearch.tokens(of: query, .caseInsensitive)
        let match = tokens.map { "\"\($0)\"*" }.joined(separator: " AND ")
        let fts = db.int("SELECT count(*) FROM fts_d WHERE fts_d MATCH ?", [match])
        let expected = reference.matches(tokens).count
        let plainTokens = TextSearch.tokens(of: query, .caseAndDiacriticInsensitive)
        let ciMatch = plainTokens.map { "(\"\($0)\"* OR \"\u{1}\($0)\"*)" }.joined(separator: " AND ")
        let ciCount = db.int("SELECT count(*) FROM fts_ci WHERE fts_ci MATCH ?", [ciMatch])
        let ciExpected = reference.matches(plainTokens, .caseAndDiacriticInsensitive).count
        let ciSensitive = db.int("SELECT count(*) FROM fts_ci WHERE fts_ci MATCH ?", [match])
        print("query \(query): tokens \(tokens) fts \(fts) TextSearch \(expected) \(fts == expected ? "OK" : "DIFF"); ignoring diacritics \(plainTokens) fts_ci \(ciCount) TextSearch \(ciExpected) \(ciCount == ciExpected ? "OK" : "DIFF"); fts_ci case-only \(ciSensitive) \(ciSensitive == expected ? "OK" : "DIFF")")
    }

case "bench":
    // 2a–c: inserts with each index kept by triggers, builds over existing rows, sizes.
    let rows = replicate(base, count: n)
    let withWordTable = arguments.contains("--wordtable")
    let only = option("--only", "")
    let chosen = indexes.filter { only.isEmpty || only.split(separator: ",").contains(Substring($0.table)) }
    print("rows \(rows.count), rounds \(rounds), indexes \(chosen.map(\.table))")
    var insertTimes: [String: [Double]] = [:]
    var buildTimes: [String: [Double]] = [:]
    var sizes: [String: Int] = [:]
    var builtSizes: [String: Int] = [:]
    for round in 1...rounds {
        // No index, then each index by triggers (alternating order would need more files: fixed order).
        var variants: [(String, [String])] = [("no index", [])]
        variants += chosen.map { ($0.table, [$0.create] + $0.triggers) }
        if arguments.contains("--queue") {
            // Triggers queue the changed rowids (plain SQL: any writer can run them); the writer
            // that has the tokenizer moves the queue into FTS5 before commit (and before a search).
            variants.append(("fts_d queue", [
                indexes[0].create,
                "CREATE TABLE fts_d_queue (rid INTEGER NOT NULL, old TEXT)",
                "CREATE TRIGGER fts_d_queue_insert AFTER INSERT ON airports BEGIN INSERT INTO fts_d_queue (rid) VALUES (new.rowid); END",
                "CREATE TRIGGER fts_d_queue_delete AFTER DELETE ON airports BEGIN INSERT INTO fts_d_queue (rid, old) VALUES (old.rowid, old.name); END",
                "CREATE TRIGGER fts_d_queue_update AFTER UPDATE OF name ON airports BEGIN INSERT INTO fts_d_queue (rid, old) VALUES (old.rowid, old.name); INSERT INTO fts_d_queue (rid) VALUES (new.rowid); END",
            ]))
        }
        if arguments.contains("--direct") {
            variants += chosen.filter { ["fts_d", "fts_u"].contains($0.table) }.map { ($0.table + " direct", [$0.create]) }
        }
        if withWordTable && round == 1 { variants.append(("depot word table", wordTable)) }
        for (label, ddl) in variants {
            let db = fresh("insert")
            db.exec(createTable)
            for statement in ddl { db.exec(statement) }
            let ms = measure {
                db.exec("BEGIN")
                insert(rows, into: db, alsoInto: label.hasSuffix(" direct") ? String(label.dropLast(7)) : nil)
                if label == "fts_d queue" {
                    // Apply: deletes (old names) first, then the current names of queued rows still there.
                    db.exec("INSERT INTO fts_d (fts_d, rowid, name) SELECT 'delete', rid, old FROM fts_d_queue WHERE old IS NOT NULL ORDER BY rowid")
                    db.exec("INSERT INTO fts_d (rowid, name) SELECT DISTINCT a.rowid, a.name FROM fts_d_queue AS q JOIN airports AS a ON a.rowid = q.rid WHERE q.old IS NULL")
                    db.exec("DELETE FROM fts_d_queue")
                }
                db.exec("COMMIT")
            }
            db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            if let table = chosen.first(where: { label == $0.table || label == $0.table + " direct" || label == $0.table + " queue" })?.table {
                print("  \(table) segments rows in _data: \(db.int("SELECT count(*) FROM \"\(table)_data\""))")
            }
            insertTimes[label, default: []].append(ms)
            sizes[label] = db.bytes
            print("round \(round) insert \(label): \(fmt(ms)) ms, \(db.bytes) bytes")
        }
        // Builds over existing rows: one raw table, each index created, rebuilt, measured, dropped.
        let db = fresh("build")
        db.exec(createTable)
        db.exec("BEGIN")
        insert(rows, into: db)
        db.exec("COMMIT")
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        let raw = db.bytes
        var builds: [(String, [String], [String])] = chosen.map { ($0.table, [$0.create, $0.rebuild], ["DROP TABLE \"\($0.table)\""]) }
        if withWordTable && round == 1 {
            builds.append(("depot word table", wordTableBuild, ["DROP TABLE \"airports#name#words\""]))
        }
        for (label, statements, drop) in builds {
            let ms = measure {
                db.exec("BEGIN")
                for statement in statements { db.exec(statement) }
                db.exec("COMMIT")
            }
            db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            buildTimes[label, default: []].append(ms)
            builtSizes[label] = db.bytes - raw
            print("round \(round) build \(label): \(fmt(ms)) ms, +\(db.bytes - raw) bytes over raw \(raw)")
            for statement in drop { db.exec(statement) }
            db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        builtSizes["raw"] = raw
    }
    let none = median(insertTimes["no index"]!)
    let u61 = insertTimes["fts_u"].map(median)
    print("\nSUMMARY insert (median ms, all rounds) / x no index / x FTS5 unicode61 triggers / file bytes / x raw")
    for (label, times) in insertTimes.sorted(by: { median($0.value) < median($1.value) }) {
        let m = median(times)
        let vsU = u61.map { String(format: "%.2f", m / $0) } ?? "-"
        print("| \(label) | \(times.map(fmt).joined(separator: ", ")) | \(fmt(m)) | \(String(format: "%.2f", m / none)) | \(vsU) | \(sizes[label]!) | \(String(format: "%.2f", Double(sizes[label]!) / Double(sizes["no index"]!))) |")
    }
    print("SUMMARY build (median ms) / index bytes over raw \(builtSizes["raw"]!)")
    for (label, times) in buildTimes.sorted(by: { median($0.value) < median($1.value) }) {
        print("| \(label) | \(times.map(fmt).joined(separator: ", ")) | \(fmt(median(times))) | \(builtSizes[label]!) |")
    }

case "tokcost":
    // The tokenizer's own share: TextSearch.words over every name, and FTS5 fed by one
    // INSERT … SELECT instead of row triggers.
    let rows = replicate(base, count: n)
    var total = 0
    let ms = median((0..<3).map { _ in measure { total = rows.reduce(0) { $0 + TextSearch.words(of: $1.name).count } } })
    print("TextSearch.words over \(rows.count) names: \(fmt(ms)) ms (\(total) words)")
    for fts in indexes where ["fts_d", "fts_u"].contains(fts.table) {
        var times: [Double] = []
        for _ in 0..<rounds {
            let db = fresh("tokcost")
            db.exec(createTable)
            db.exec("BEGIN"); insert(rows, into: db); db.exec("COMMIT")
            db.exec(fts.create)
            times.append(measure {
                db.exec("BEGIN")
                db.exec("INSERT INTO \(fts.table) (rowid, name) SELECT rowid, name FROM airports")
                db.exec("COMMIT")
            })
        }
        print("\(fts.table) filled by one INSERT … SELECT over existing rows: \(times.map(fmt)) median \(fmt(median(times))) ms")
    }

case "smalldb":
    // A file for the sqlite3 CLI test: the 28k airports, FTS5 'depot' kept by triggers.
    let db = fresh("small")
    db.exec(createTable)
    db.exec(indexes[0].create)
    for trigger in indexes[0].triggers { db.exec(trigger) }
    db.exec("BEGIN")
    insert(base, into: db)
    db.exec("COMMIT")
    print(db.int("SELECT count(*) FROM fts_d WHERE fts_d MATCH '\"gard\"*'"))

case "query":
    QueryBench.run(
        rows: replicate(base, count: n), dir: dataDir, repetitions: Int(option("--reps", "5"))!,
        scanRepetitions: Int(option("--scan-reps", "3"))!)

default:
    print("commands: check | bench [--n N --rounds R --only fts_d,... --wordtable] | query")
}
