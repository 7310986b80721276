// Axes crossed: foreign writers (a client without Depot's tokenizer or functions; REPLACE
// conflicts), transactions (a search sees its own writes; a rollback), random text against the
// definition (ASCII fast path and Swift), and upgrades from the word tables of earlier versions.
import Depot
import DepotTestSupport
import DepotTesting
import Foundation
import GRDB
import Synchronization
import Testing

@_spi(Benchmarks) @testable import DepotSQLite

@Suite("SQLite search index", .timeLimit(.minutes(5)))
struct SQLiteSearchIndexTests {
    static let migrations = Migrations([
        Migration("1", [.createTable(TestAirport.self)]),
        Migration("2", [.createSearchIndex(TestAirport.self, \.name)]),
    ])

    /// A store on a new file, migrated to a search index on `name`.
    static func indexedStore() async throws -> (SQLiteStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("search-\(UUID().uuidString).sqlite")
            .path
        let store = try SQLiteStore(path: path)
        try await store.migrate(migrations)
        return (store, path)
    }

    /// Another client of the file: with Depot's functions and tokenizer registered, or (`plain`)
    /// without, as the `sqlite3` shell is.
    static func otherClient(_ path: String, plain: Bool = false) throws -> DatabaseQueue {
        var configuration = Configuration()
        if !plain { configuration.prepareDatabase { db in SQLiteFunctions.register(in: db) } }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Expects the FTS5 index to hold exactly each row's tokens (after folding what is queued):
    /// its words, and the marked diacritic-free forms that differ.
    static func expectIndexMatchesRows(_ store: SQLiteStore, _ path: String) async throws {
        _ = try await store.repository(TestAirport.self).count(where: .matches(\.name, "a"))
        let reader = try otherClient(path)
        defer { try? reader.close() }
        try await reader.write { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \"airports#name#words#queue\"") == 0)
            try db.execute(
                sql: "CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'airports#name#words', 'instance')")
            var indexed: [Int64: Set<String>] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT doc, term FROM temp.vocab") {
                indexed[row[0], default: []].insert(row[1])
            }
            var expected: [Int64: Set<String>] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT rowid, name FROM airports") {
                let tokens = SQLiteSearchTokenizer.tokens(of: row[1] as String).map(\.token)
                if !tokens.isEmpty { expected[row[0]] = Set(tokens) }
            }
            #expect(indexed == expected)
        }
    }

    @Test("rows replaced by INSERT OR REPLACE and UPDATE OR REPLACE from another connection leave no stale words")
    func replaceLeavesNoStaleWords() async throws {
        let (store, path) = try await Self.indexedStore()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        // Another client, writing the way GRDB's `.replace` conflict policy does.
        let other = try Self.otherClient(path)
        try await other.write { db in
            for name in ["Bergen Flesland", "Tromso Langnes"] {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO airports (icao, name, country, elevation, lat, lon) "
                        + "VALUES ('ENGM', ?, 'NO', 0, 0, 0)", arguments: [name])
            }
            try db.execute(sql: "UPDATE OR REPLACE airports SET icao = 'ENGM' WHERE icao = 'ENBR'")
        }
        try other.close()
        #expect(try await airports.count(where: .matches(\.name, "gardermoen")) == 0)
        #expect(try await airports.count(where: .matches(\.name, "tromso")) == 0, "ENGM was replaced by ENBR's row")
        #expect(try await airports.fetch(where: .matches(\.name, "flesland")).map(\.icao) == ["ENGM"])
        try await Self.expectIndexMatchesRows(store, path)
    }

    @Test("rows INSERT OR REPLACE and UPDATE OR REPLACE remove through another unique index leave no stale words")
    func replaceThroughUniqueIndex() async throws {
        let unique = MigrationOperation.createIndex("airports_iata", on: "airports", columns: ["iata"], unique: true)
        // The unique index made before the search index, and after it (its step rebuilds the triggers).
        for steps in [
            [unique, .createSearchIndex(TestAirport.self, \.name)],
            [.createSearchIndex(TestAirport.self, \.name), unique],
        ] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "search-\(UUID().uuidString).sqlite"
            )
            .path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let store = try SQLiteStore(path: path)
            try await store.migrate(
                Migrations([Migration("1", [.createTable(TestAirport.self)]), Migration("2", steps)]))
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            let other = try Self.otherClient(path)
            try await other.write { db in
                // A new key with Oslo's code: Oslo's row goes. Bergen takes Ålesund's code: Ålesund's goes.
                try db.execute(
                    sql: "INSERT OR REPLACE INTO airports (icao, iata, name, country, elevation, lat, lon) "
                        + "VALUES ('XOSL', 'OSL', 'Quokka Field', 'NO', 0, 0, 0)")
                try db.execute(sql: "UPDATE OR REPLACE airports SET iata = 'AES' WHERE icao = 'ENBR'")
            }
            try other.close()
            #expect(try await airports.count() == TestAirport.sample.count - 1)
            #expect(try await airports.count(where: .matches(\.name, "gardermoen")) == 0)
            #expect(try await airports.count(where: .matches(\.name, "vigra")) == 0)
            #expect(try await airports.fetch(where: .matches(\.name, "quokka")).map(\.icao) == ["XOSL"])
            try await Self.expectIndexMatchesRows(store, path)
        }
    }

    @Test("building the index over rows already there reports each batch as migration progress, and indexes every row")
    func buildReportsRows() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("search-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteStore(path: path)
        try await store.migrate(Migrations([Self.migrations.steps[0]]))
        let rows = TestAirport.numbered(45_000)
        try await store.repository(TestAirport.self).insert(rows)
        let reports = Mutex<[MigrationProgress]>([])
        try await store.migrate(Self.migrations) { progress in reports.withLock { $0.append(progress) } }
        let batches = reports.withLock { $0 }.compactMap(\.rows)
        #expect(batches == [20_000, 40_000, 45_000].map { MigrationProgress.Rows(done: $0, total: 45_000) })
        #expect(reports.withLock { $0 }.last == MigrationProgress(done: 1, total: 1, step: "2"))
        try await Self.expectIndexMatchesRows(store, path)
    }

    @Test("a client without Depot's tokenizer or functions writes an indexed table, and Depot's next search sees it")
    func plainClientWrites() async throws {
        let (store, path) = try await Self.indexedStore()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        let shell = try Self.otherClient(path, plain: true)
        try await shell.write { db in
            try db.execute(
                sql: "INSERT INTO airports (icao, name, country, elevation, lat, lon) "
                    + "VALUES ('ENTC', 'Tromsö Langnes', 'NO', 0, 0, 0)")
            try db.execute(sql: "UPDATE airports SET name = 'Bergen Flesland Lufthavn' WHERE icao = 'ENBR'")
            try db.execute(sql: "UPDATE airports SET elevation = 1 WHERE icao = 'ENAL'")
            try db.execute(sql: "DELETE FROM airports WHERE icao = 'ENGM'")
        }
        try shell.close()
        #expect(
            try await airports.fetch(where: .matches(\.name, "tromso", .caseAndDiacriticInsensitive)).map(\.icao) == [
                "ENTC"
            ])
        #expect(try await airports.fetch(where: .matches(\.name, "luft")).map(\.icao) == ["ENBR"])
        #expect(try await airports.count(where: .matches(\.name, "gardermoen")) == 0)
        #expect(try await airports.count(where: .matches(\.name, "vigra")) == 1)
        try await Self.expectIndexMatchesRows(store, path)
    }

    @Test("a search inside a transaction sees its own writes; a rolled-back transaction leaves the index as it was")
    func transactionsSeeTheirWrites() async throws {
        let (store, path) = try await Self.indexedStore()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        let seen = try await store.write { tx in
            let airports = tx.repository(TestAirport.self)
            try await airports.insert(TestAirport(icao: "ENTC", name: "Tromsø Langnes", country: "NO"))
            let found = try await airports.fetch(where: .matches(\.name, "langn")).map(\.icao)
            let removed = try await airports.remove(where: .matches(\.name, "tromsø"))
            return (found, removed)
        }
        #expect(seen.0 == ["ENTC"])
        #expect(seen.1 == 1)
        struct Rollback: Error {}
        await #expect(throws: Rollback.self) {
            try await store.write { tx in
                try await tx.repository(TestAirport.self).insert(
                    TestAirport(icao: "ENEV", name: "Harstad", country: "NO"))
                try await tx.repository(TestAirport.self).remove(where: .matches(\.name, "oslo"))
                #expect(try await tx.repository(TestAirport.self).count(where: .matches(\.name, "harst")) == 1)
                throw Rollback()
            }
        }
        #expect(try await airports.count(where: .matches(\.name, "harst")) == 0)
        #expect(try await airports.count(where: .matches(\.name, "oslo")) == 1)
        try await Self.expectIndexMatchesRows(store, path)
    }

    @Test("random writes by Depot and by a plain client: searches and relevance equal TextSearch over the rows")
    func randomWritesAgreeWithTheDefinition() async throws {
        let (store, path) = try await Self.indexedStore()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let airports = store.repository(TestAirport.self)
        let shell = try Self.otherClient(path, plain: true)
        defer { try? shell.close() }
        var random = SplitMix64(state: 4040)
        let words = ["São", "sao", "Saõ", "Paulo", "paul", "Oslo", "oslofjord", "Åre", "are", "Ære", "x", "x-ray", ""]
        func name() -> String {
            (0..<Int.random(in: 0...4, using: &random)).map { _ in words.randomElement(using: &random) ?? "" }
                .joined(separator: ["", " ", ", ", "-"].randomElement(using: &random) ?? " ")
        }
        for round in 0..<150 {
            let key = "K\(Int.random(in: 0..<12, using: &random))"
            switch Int.random(in: 0..<7, using: &random) {
            case 0: try await airports.upsert(TestAirport(icao: key, name: name(), country: "NO"))
            case 1: _ = try await airports.remove(key)
            case 2: _ = try await airports.remove(where: .matches(\.name, words.randomElement(using: &random) ?? ""))
            case 3:
                let text = name()
                try await shell.write { db in
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO airports (icao, name, country, elevation, lat, lon) "
                            + "VALUES (?, ?, 'NO', 0, 0, 0)", arguments: [key, text])
                }
            case 4:
                let text = name()
                try await shell.write { db in
                    try db.execute(sql: "UPDATE airports SET name = ? WHERE icao = ?", arguments: [text, key])
                }
            case 5:
                try await shell.write { db in
                    try db.execute(sql: "DELETE FROM airports WHERE icao = ?", arguments: [key])
                }
            default:
                let text = name()
                try await store.write { tx in
                    let airports = tx.repository(TestAirport.self)
                    try await airports.upsert(TestAirport(icao: key, name: text, country: "NO"))
                    let seen = try await airports.count(where: .matches(\.name, text))
                    #expect(seen >= 1, "a transaction finds the row it wrote: \(text)")
                }
            }
            let rows = try await airports.fetch()
            for matching in [TextMatching.caseInsensitive, .caseAndDiacriticInsensitive] {
                let query = [
                    words.randomElement(using: &random) ?? "",
                    String((words.randomElement(using: &random) ?? "").prefix(2)),
                ]
                .joined(separator: " ")
                let tokens = TextSearch.tokens(of: query, matching)
                let expected = rows.filter { TextSearch.matches($0.name, tokens: tokens, matching) }.sorted {
                    let (a, b) = (
                        TextSearch.exactWords($0.name, tokens: tokens, matching),
                        TextSearch.exactWords($1.name, tokens: tokens, matching)
                    )
                    if a != b { return a > b }
                    let (x, y) = ($0.name.unicodeScalars.count, $1.name.unicodeScalars.count)
                    return x != y ? x < y : $0.icao < $1.icao
                }.map(\.icao)
                let found = try await airports.fetch(
                    where: .matches(\.name, query, matching), orderBy: [.relevance(\.name, to: query, matching)]
                ).map(\.icao)
                #expect(found == expected, "round \(round), \(matching), \(query.debugDescription)")
            }
        }
        try await Self.expectIndexMatchesRows(store, path)
    }

    @Test("the tokenizer emits TextSearch's words and their differing diacritic-free forms, for random text")
    func tokenizerIsTheDefinition() {
        var random = SplitMix64(state: 40)
        let pieces = [
            "a", "Z", "q", "7", "0", " ", ",", "-", "'", "\t", "\u{1}", "é", "É", "ß", "ø", "Å", "ı", "İ", "ﬁ", "ǅ",
            "\u{301}", "漢", "字", "ア", "\u{2003}", "«", "·", "\u{3000}", "Ω", "ς", "Σ", "😀", "ĳ", "\u{10FFFF}",
        ]
        for round in 0..<3_000 {
            let ascii = round % 2 == 0
            let count = Int.random(in: 0...(round % 50 == 0 ? 300 : 24), using: &random)
            let text = String(
                (0..<count).map { _ in
                    let piece = pieces[Int.random(in: 0..<(ascii ? 10 : pieces.count), using: &random)]
                    return Int.random(in: 0..<4, using: &random) == 0 ? piece + piece : piece
                }.joined())
            let tokens = SQLiteSearchTokenizer.tokens(of: text)
            let words = TextSearch.words(of: text)
            #expect(tokens.filter { !$0.colocated }.map(\.token) == words, "\(text.debugDescription)")
            let marked = words.compactMap { word -> String? in
                let plain = TextFolding.foldIgnoringDiacritics(word)
                return plain.isEmpty || plain == word ? nil : "\u{1}" + plain
            }
            #expect(tokens.filter { $0.colocated }.map { $0.token } == marked, "\(text.debugDescription)")
        }
        // A query string starting with U+0001 asks for marked forms, folded.
        #expect(SQLiteSearchTokenizer.tokens(of: "\u{1}são", query: true).map(\.token) == ["\u{1}sao"])
        #expect(SQLiteSearchTokenizer.tokens(of: "são", query: true).map(\.token) == ["são"])
    }

    @Test("migrate rebuilds a word table of a Depot version before FTS5 as an FTS5 index, keeping what it finds")
    func upgradesLegacyWordTables() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("legacy-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try SQLiteStore(path: path)
            try await store.migrate(Self.migrations)
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
        }
        // The index as the version before FTS5 made it (its statements, verbatim).
        let other = try Self.otherClient(path)
        try await other.write { db in
            for statement in SQLiteDialect.sqlite.dropSearchIndex(
                on: TestAirport.schema.table, column: "name", schema: nil)
            {
                try db.execute(sql: statement)
            }
            for statement in Self.legacyIndex { try db.execute(sql: statement) }
            try db.execute(sql: "UPDATE airports SET name = 'Oslo Lufthavn' WHERE icao = 'ENGM'")
        }
        try other.close()
        let store = try SQLiteStore(path: path)
        try await store.migrate(Self.migrations)
        let airports = store.repository(TestAirport.self)
        #expect(try await airports.fetch(where: .matches(\.name, "luft")).map(\.icao) == ["ENGM"])
        let named = try await airports.fetch().filter {
            TextSearch.matches($0.name, tokens: ["airport"], .caseInsensitive)
        }
        #expect(try await airports.fetch(where: .matches(\.name, "airport")).map(\.icao) == named.map(\.icao))
        #expect(named.count >= 2)
        let kind = try await store.sql(
            "SELECT sql FROM sqlite_master WHERE name = 'airports#name#words'", decoding: String.self)
        #expect(kind.first?.hasPrefix("CREATE VIRTUAL TABLE") == true)
        #expect(try await store.appliedMigrations().count == 2, "no migration step ran again")
        try await Self.expectIndexMatchesRows(store, path)
    }

    @Test("a search index on a WITHOUT ROWID table fails its step naming the table, and writes nothing")
    func withoutRowidIsRefused() async throws {
        let store = try SQLiteStore.temporary()
        let steps = Migrations([
            Migration(
                "1 words",
                [
                    .sql(
                        sqlite: "CREATE TABLE airports (icao TEXT NOT NULL PRIMARY KEY, iata TEXT, name TEXT NOT NULL, "
                            + "city TEXT, country TEXT NOT NULL, elevation REAL NOT NULL, lat REAL NOT NULL, "
                            + "lon REAL NOT NULL) WITHOUT ROWID")
                ]),
            Migration("2 search", [.createSearchIndex(TestAirport.self, \.name)]),
        ])
        let error = await #expect(throws: DepotError.self) { try await store.migrate(steps) }
        #expect(error?.kind == .migration)
        #expect("\(error.map { String(describing: $0) } ?? "")".contains("'airports' is a WITHOUT ROWID table"))
        #expect(try await store.appliedMigrations().map(\.version) == [1])
        let leftovers = try await store.sql(
            "SELECT name FROM sqlite_master WHERE name LIKE 'airports#%'", decoding: String.self)
        #expect(leftovers == [])
    }

    /// The search index of `airports.name` as Depot made it before FTS5.
    static let legacyIndex = [
        "CREATE TABLE \"airports#name#words\" (\"word\" TEXT NOT NULL, \"plain\" TEXT NOT NULL, \"key\" TEXT NOT NULL, "
            + "PRIMARY KEY (\"word\", \"key\")) WITHOUT ROWID",
        "INSERT OR IGNORE INTO \"airports#name#words\" (\"word\", \"plain\", \"key\") SELECT w.value, "
            + "depot_fold_diacritics(w.value), t.\"icao\" FROM \"airports\" AS t, json_each(depot_words(t.\"name\")) AS w",
        "CREATE INDEX \"airports#name#words#plain\" ON \"airports#name#words\" (\"plain\", \"key\")",
        "CREATE INDEX \"airports#name#words#key\" ON \"airports#name#words\" (\"key\")",
        "CREATE TRIGGER \"airports#name#words#insert\" AFTER INSERT ON \"airports\" BEGIN "
            + "DELETE FROM \"airports#name#words\" WHERE \"key\" = NEW.\"icao\"; INSERT OR IGNORE INTO "
            + "\"airports#name#words\" (\"word\", \"plain\", \"key\") SELECT value, depot_fold_diacritics(value), "
            + "NEW.\"icao\" FROM json_each(depot_words(NEW.\"name\")); END",
        "CREATE TRIGGER \"airports#name#words#update\" AFTER UPDATE OF \"name\", \"icao\" ON \"airports\" BEGIN "
            + "DELETE FROM \"airports#name#words\" WHERE \"key\" = OLD.\"icao\" OR \"key\" = NEW.\"icao\"; INSERT OR "
            + "IGNORE INTO \"airports#name#words\" (\"word\", \"plain\", \"key\") SELECT value, "
            + "depot_fold_diacritics(value), NEW.\"icao\" FROM json_each(depot_words(NEW.\"name\")); END",
        "CREATE TRIGGER \"airports#name#words#delete\" AFTER DELETE ON \"airports\" BEGIN "
            + "DELETE FROM \"airports#name#words\" WHERE \"key\" = OLD.\"icao\"; END",
    ]
}
