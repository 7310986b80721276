import Depot
import DepotPostgres
import DepotSQL
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// A text column whose name is 63 bytes, PostgreSQL's limit for identifiers.
private struct LongNamed: Entity, Equatable {
    var id: Int
    var text: String

    static let longName = String(repeating: "x", count: 63)
    static let schema = Schema<LongNamed>("long_named", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.text, longName)
    }
}

@Suite(
    "PostgreSQL folds in the server", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresFoldingTests {
    @Test("depot_fold and depot_fold_diacritics in the server fold every Unicode scalar exactly as TextFolding does")
    func everyScalar() async throws {
        try await PostgresTestServer.withStore { store in
            // Any read installs Depot's functions when they are missing.
            _ = try await store.repository(TestAirport.self).count()
            let schema = try #require(store.configuration.schema)
            var differences: [String] = []
            var compared = 0
            for start in stride(from: 1, through: 0x10FFFF, by: 0x20000) {
                let end = min(start + 0x1FFFF, 0x10FFFF)
                let rows = try await PostgresTestServer.rawRows(
                    "SELECT i::text, depot_fold(chr(i)), depot_fold_diacritics(chr(i)) FROM generate_series(\(start), \(end)) AS i "
                        + "WHERE i < 55296 OR i > 57343 ORDER BY i",
                    schema: schema)
                // 131,072 folds: off the cooperative pool, so the tests beside this one keep their threads.
                let (count, different) = try await offPool { () -> (Int, [String]) in
                    var count = 0
                    var different: [String] = []
                    for row in rows {
                        guard let code = row[0].flatMap({ UInt32($0) }), let scalar = Unicode.Scalar(code) else {
                            continue
                        }
                        count += 1
                        let expected = TextFolding.fold(String(scalar))
                        if !(row[1] ?? "").utf8.elementsEqual(expected.utf8) {
                            different.append(String(code, radix: 16, uppercase: true))
                        }
                        let plain = TextFolding.foldIgnoringDiacritics(String(scalar))
                        if !(row[2] ?? "").utf8.elementsEqual(plain.utf8) {
                            different.append("diacritics " + String(code, radix: 16, uppercase: true))
                        }
                    }
                    return (count, different)
                }
                compared += count
                differences += different
            }
            #expect(compared == 0x10FFFF - 2048)
            #expect(differences.isEmpty, "U+\(differences.prefix(20).joined(separator: ", U+"))")
        }
    }

    @Test("depot_fold in the server agrees with TextFolding.fold on mixed strings: composition, marks, ASCII")
    func mixedStrings() async throws {
        try await PostgresTestServer.withStore { store in
            _ = try await store.repository(TestAirport.self).count()
            let schema = try #require(store.configuration.schema)
            var generator = SplitMix64(state: 28)
            let folding = TextFolding.caseFolding.map { String($0.scalar) }
            let pieces =
                folding + ["\u{301}", "\u{308}", "\u{345}", "\u{307}", "\u{303}", "a", "Z", " ", "ö", "O", "é"]
            var samples = ["Sa\u{303}O PAULO", "ΣΊΣΥΦΟΣ", "İSTANBUL", "ǅemal", "STRASSE", "ﬃ", "ᾈ", "", "plain"]
            for _ in 0..<3_000 {
                let length = Int.random(in: 1...8, using: &generator)
                samples.append((0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined())
            }
            let values = samples.enumerated().map {
                "(\($0.offset), '\($0.element.replacingOccurrences(of: "'", with: "''"))')"
            }
            let rows = try await PostgresTestServer.rawRows(
                "SELECT n::text, depot_fold(s), depot_fold_diacritics(s) FROM (VALUES \(values.joined(separator: ", "))) "
                    + "AS v(n, s) ORDER BY n",
                schema: schema)
            #expect(rows.count == samples.count)
            for row in rows {
                let index = try #require(row[0].flatMap { Int($0) })
                let expected = TextFolding.fold(samples[index])
                #expect(
                    (row[1] ?? "").utf8.elementsEqual(expected.utf8), "\(samples[index].unicodeScalars.map(\.value))")
                let plain = TextFolding.foldIgnoringDiacritics(samples[index])
                #expect(
                    (row[2] ?? "").utf8.elementsEqual(plain.utf8), "\(samples[index].unicodeScalars.map(\.value))")
            }
        }
    }

    @Test("rows written by plain SQL match case-insensitively, and an update by plain SQL is seen at once")
    func externalWriters() async throws {
        try await PostgresTestServer.withStore { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            let schema = try #require(store.configuration.schema)
            _ = try await PostgresTestServer.rawRows(
                "UPDATE airports SET name = 'Zebra Field' WHERE icao = 'ENGM'", schema: schema)
            _ = try await PostgresTestServer.rawRows(
                "INSERT INTO airports (icao, name, country, elevation, lat, lon) "
                    + "VALUES ('XXXX', 'STRASSE \u{1C80}', 'DE', 0, 0, 0)",
                schema: schema)
            #expect(try await airports.fetch(where: .contains(\.name, "gardermoen", .caseInsensitive)).isEmpty)
            #expect(
                try await airports.fetch(where: .contains(\.name, "zebra", .caseInsensitive)).map(\.icao) == ["ENGM"])
            #expect(
                try await airports.fetch(where: .hasPrefix(\.name, "straße", .caseInsensitive)).map(\.icao) == ["XXXX"])
            #expect(try await airports.fetch(where: .hasSuffix(\.name, "В", .caseInsensitive)).map(\.icao) == ["XXXX"])
        }
    }

    @Test("a text column whose name is 63 bytes long is created and matched case-insensitively")
    func longColumnName() async throws {
        try await PostgresTestServer.withStore { store in
            let rows = store.repository(LongNamed.self)
            try await rows.insert([LongNamed(id: 1, text: "Gardermoen"), LongNamed(id: 2, text: "Flesland")])
            #expect(try await rows.fetch(where: .contains(\.text, "GARDER", .caseInsensitive)).map(\.id) == [1])
        }
    }

    @Test("writes send no folded copies: a new table holds only the entity's columns")
    func noFoldedCopies() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            let schema = try #require(store.configuration.schema)
            #expect(
                try await PostgresTestServer.columnNames(of: "airports", in: schema)
                    == ["icao", "iata", "name", "city", "country", "elevation", "lat", "lon"])
        }
    }

    @Test(
        "a table with an earlier Depot's folded copies is read and written; a migration dropping the column drops its copy"
    )
    func legacyFoldedCopies() async throws {
        try await PostgresTestServer.withStore { store in
            let schema = try await createAirportsByHand(
                for: store,
                extra: "\"icao#folded\" text, \"iata#folded\" text, \"name#folded\" text, \"city#folded\" text, "
                    + "\"country#folded\" text, ",
                insert: "INSERT INTO airports (icao, name, country, elevation, lat, lon, \"name#folded\") "
                    + "VALUES ('ENGM', 'Oslo Gardermoen', 'NO', 681, 60.19, 11.1, 'stale copy')")
            let airports = store.repository(TestAirport.self)
            #expect(
                try await airports.fetch(where: .contains(\.name, "OSLO", .caseInsensitive)).map(\.icao) == ["ENGM"])
            try await airports.insert(TestAirport(icao: "ENBR", name: "Bergen Flesland", country: "NO"))
            #expect(try await airports.count(where: .contains(\.name, "flesland", .caseInsensitive)) == 1)
            try await store.migrate(Migrations([Migration("1 no city", [.dropColumn("city", from: "airports")])]))
            let columns = try await PostgresTestServer.columnNames(of: "airports", in: schema)
            #expect(!columns.contains("city") && !columns.contains("city#folded"))
            #expect(columns.contains("name#folded"))
        }
    }
}

@Suite(
    "PostgreSQL reads never write",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"), .timeLimit(.minutes(10)))
struct PostgresReadsNeverWriteTests {
    @Test("a read gives a hand-made table no trigger; the first write through Depot does")
    func readsInstallNothing() async throws {
        try await PostgresTestServer.withStore { store in
            let schema = try await createAirportsByHand(
                for: store,
                insert: "INSERT INTO airports (icao, name, country, elevation, lat, lon) "
                    + "VALUES ('ENGM', 'Oslo', 'NO', 1, 2, 3)")
            let triggers =
                "SELECT count(*)::text FROM pg_trigger WHERE tgrelid = '\"\(schema)\".airports'::regclass AND NOT tgisinternal"
            let airports = store.repository(TestAirport.self)
            #expect(try await airports.fetch(where: .contains(\.name, "OSLO", .caseInsensitive)).count == 1)
            #expect(try await airports.count() == 1)
            #expect(try await PostgresTestServer.rawRows(triggers).first?[0] == "0")
            try await airports.insert(TestAirport(icao: "ENBR", name: "Bergen", country: "NO"))
            #expect(try await PostgresTestServer.rawRows(triggers).first?[0] == "1")
        }
    }

    @Test("a role that may only read reads a database Depot set up: fetch, count, search, observe")
    func readOnlyRole() async throws {
        try await PostgresTestServer.withStore { store in
            let schema = try #require(store.configuration.schema)
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            try await PostgresTestServer.grantReader(on: schema)
            let reader = try PostgresTestServer.readerStore(schema: schema)
            try await withCleanup { () async throws -> Void in
                let airports = reader.repository(TestAirport.self)
                #expect(try await airports.count() == TestAirport.sample.count)
                #expect(
                    try await airports.fetch(where: .contains(\.name, "são", .caseInsensitive)).map(\.icao) == ["SBSP"])
                var updates = airports.observe(where: \.country == "NO").makeAsyncIterator()
                #expect(try await updates.next()?.count == TestAirport.sample.filter { $0.country == "NO" }.count)
                let error = await #expect(throws: DepotError.self) {
                    try await airports.insert(TestAirport(icao: "ZZZZ", name: "Nope", country: "NO"))
                }
                #expect(error?.message.contains("permission denied") == true)
            } cleanup: {
                await reader.close()
            }
        }
    }

    @Test("a schema whose name has capitals is set up once: the next store finds Depot's functions and writes nothing")
    func mixedCaseSchema() async throws {
        let schema = "Mixed_" + PostgresEnvironment.scratchSchemaName()
        var configuration = try PostgresStore.Configuration(url: try PostgresEnvironment.requireURL())
        configuration.schema = schema
        let writer = PostgresStore(configuration: configuration)
        let reader = try PostgresTestServer.readerStore(schema: schema)
        try await withCleanup { () async throws -> Void in
            try await writer.repository(TestAirport.self).insert(TestAirport.sample)
            let check = PostgresDialect.setupCheck.sql
                .replacingOccurrences(of: "$1", with: "'\(PostgresDialect.setupVersion)'")
                .replacingOccurrences(of: "count(*)", with: "count(*)::text")
            #expect(
                try await PostgresTestServer.rawRows(check, schema: schema).first?[0]
                    == String(PostgresDialect.setupFunctionCount))
            try await PostgresTestServer.grantReader(on: schema)
            #expect(try await reader.repository(TestAirport.self).count() == TestAirport.sample.count)
        } cleanup: {
            await reader.close()
            try? await writer.dropSchema()
            await writer.close()
        }
    }

    @Test("a role that may only read, where Depot's functions are missing, gets an error naming them")
    func readOnlyRoleWithoutFunctions() async throws {
        let schema = PostgresEnvironment.scratchSchemaName()
        _ = try await PostgresTestServer.rawRows("CREATE SCHEMA \"\(schema)\"")
        try await PostgresTestServer.grantReader(on: schema)
        let reader = try PostgresTestServer.readerStore(schema: schema)
        try await withCleanup {
            let error = await #expect(throws: DepotError.self) {
                _ = try await reader.repository(TestAirport.self).count()
            }
            #expect(error?.kind == .storage)
            #expect(error?.message.contains("depot_fold") == true)
            #expect(error?.message.contains("could not be installed") == true)
        } cleanup: {
            await reader.close()
            _ = try? await PostgresTestServer.rawRows("DROP SCHEMA \"\(schema)\" CASCADE")
        }
    }
}

/// Creates `airports` (`TestAirport`'s table) by plain SQL in the schema of `store`, as another
/// client or an earlier Depot would, with `extra` column definitions, and runs `insert`; returns the
/// schema. The store has read once before (so Depot's functions are there, and no table adopted).
private func createAirportsByHand(for store: PostgresStore, extra: String = "", insert: String) async throws
    -> String
{
    let schema = try #require(store.configuration.schema)
    _ = try await store.repository(TestAirport.self).count()
    _ = try await PostgresTestServer.rawRows(
        "CREATE TABLE airports (icao text NOT NULL, iata text, name text NOT NULL, city text, country text NOT NULL, "
            + "elevation double precision NOT NULL, lat double precision NOT NULL, lon double precision NOT NULL, "
            + extra + "PRIMARY KEY (icao)); " + insert,
        schema: schema)
    return schema
}

@Suite(
    "PostgreSQL search index", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresSearchIndexTests {
    /// The airports table with a search index on its names.
    static let searchedNames = Migrations([
        Migration("1", [.createTable(TestAirport.self)]),
        Migration("2", [.createSearchIndex(TestAirport.self, \.name)]),
    ])

    @Test("depot_words in the server splits text into exactly the words TextSearch finds")
    func wordsAgree() async throws {
        try await PostgresTestServer.withStore { store in
            _ = try await store.repository(TestAirport.self).count()
            let schema = try #require(store.configuration.schema)
            var generator = SplitMix64(state: 2_711)
            let pieces = [
                "Oslo", "GARDERMOEN", "São", " ", ",", "-", "\u{2014}", "\u{00A0}", "«", "»", "·", "Straße", "ǅ", "ﬁ",
                "e\u{301}", "\u{3000}", "日本", "42", "_", "'", "\u{10FFFF}", "İ", "Ωmega", "\t", "a",
            ]
            var samples = ["Oslo Airport, Gardermoen", "", "   ", "a-b_c d.e", "«Ümlaut» · Straße"]
            for _ in 0..<1_500 {
                let length = Int.random(in: 1...10, using: &generator)
                samples.append(
                    (0..<length).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined())
            }
            let values = samples.enumerated().map {
                "(\($0.offset), '\($0.element.replacingOccurrences(of: "'", with: "''"))')"
            }
            let rows = try await PostgresTestServer.rawRows(
                "SELECT n::text, coalesce(string_agg(w, ' ' ORDER BY w COLLATE \"C\"), '') FROM (VALUES "
                    + values.joined(separator: ", ") + ") AS v(n, s) LEFT JOIN LATERAL depot_words(s) AS w ON true "
                    + "GROUP BY n ORDER BY n",
                schema: schema)
            #expect(rows.count == samples.count)
            for row in rows {
                let index = try #require(row[0].flatMap { Int($0) })
                let expected = TextSearch.words(of: samples[index]).sorted {
                    $0.utf8.lexicographicallyPrecedes($1.utf8)
                }
                #expect(
                    (row[1] ?? "") == expected.joined(separator: " "),
                    "\(samples[index].unicodeScalars.map { String($0.value, radix: 16) })")
            }
        }
    }

    /// `text` as an SQL literal, quotes doubled scalar by scalar (a quote and a combining mark are
    /// one Character).
    static func literal(_ text: String) -> String {
        var quoted = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "'" { quoted.append(scalar) }
            quoted.append(scalar)
        }
        return "'" + String(quoted) + "'"
    }

    @Test(
        "depot_search_vector holds TextSearch's words cut at 200 characters, and marked diacritic-free forms of non-ASCII text"
    )
    func searchVectorAgrees() async throws {
        try await PostgresTestServer.withStore { store in
            _ = try await store.repository(TestAirport.self).count()
            let schema = try #require(store.configuration.schema)
            var generator = SplitMix64(state: 4_099)
            let pieces = [
                "Oslo", "GARDERMOEN", "São", " ", ",", "-", "\u{2014}", "\u{00A0}", "«", "·", "Straße", "ǅ", "ﬁ",
                "e\u{301}", "\u{301}", "日本", "42", "_", "'", "\u{10FFFF}", "İ", "Ωmega", "\t", "\u{1}",
                String(repeating: "é", count: 210), String(repeating: "Ab", count: 130), "ÆRØ",
            ]
            var samples = ["Oslo Airport, Gardermoen", "", "   ", "a-b_c d.e", "«Ümlaut» · Straße"]
            for _ in 0..<800 {
                let length = Int.random(in: 1...8, using: &generator)
                samples.append(
                    (0..<length).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined())
            }
            func cut(_ word: String) -> String { PostgresDialect().indexedWord(word) }
            let values = samples.enumerated().map { "(\($0.offset), \(Self.literal($0.element)))" }
            let rows = try await PostgresTestServer.rawRows(
                "SELECT n::text, coalesce(string_agg(w, ' ' ORDER BY w COLLATE \"C\"), '') FROM (VALUES "
                    + values.joined(separator: ", ") + ") AS v(n, s) LEFT JOIN LATERAL "
                    + "unnest(tsvector_to_array(depot_search_vector(s))) AS w ON true GROUP BY n ORDER BY n",
                schema: schema)
            #expect(rows.count == samples.count)
            for row in rows {
                let index = try #require(row[0].flatMap { Int($0) })
                let sample = samples[index]
                let words = TextSearch.words(of: sample)
                var expected = Set(words.map(cut))
                if !sample.utf8.allSatisfy({ $0 < 0x80 }) {
                    for word in words {
                        let plain = cut(TextFolding.foldIgnoringDiacritics(word))
                        if !plain.isEmpty { expected.insert("\u{1}" + plain) }
                    }
                }
                let sorted = expected.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                #expect(
                    (row[1] ?? "") == sorted.joined(separator: " "),
                    "\(sample.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            // depot_exact_words (the relevance of rows that are not ASCII) against TextSearch's.
            let tokens = ["sao", "são", "straße", "strasse", "e", "é", "oslo", "日本", "aeø"]
            let list = Self.literal(tokens.joined(separator: "\u{1}"))
            let exact = try await PostgresTestServer.rawRows(
                "SELECT n::text, depot_exact_words(s, \(list), false)::text, depot_exact_words(s, \(list), true)::text "
                    + "FROM (VALUES " + values.joined(separator: ", ") + ") AS v(n, s) ORDER BY n",
                schema: schema)
            for row in exact {
                let sample = samples[try #require(row[0].flatMap { Int($0) })]
                #expect(row[1] == "\(TextSearch.exactWords(sample, tokens: tokens, .caseInsensitive))", "\(sample)")
                #expect(
                    row[2] == "\(TextSearch.exactWords(sample, tokens: tokens, .caseAndDiacriticInsensitive))",
                    "\(sample)")
            }
        }
    }

    @Test(
        "relevance counts agree with TextSearch's on texts that are not ASCII, for ASCII query words the pattern screens"
    )
    func relevanceCandidatesAgree() async throws {
        try await PostgresTestServer.withStore { store in
            _ = try await store.repository(TestAirport.self).count()
            let schema = try #require(store.configuration.schema)
            var generator = SplitMix64(state: 9_001)
            // Scalars that fold, compose or split in ways a per-scalar reading could miss.
            let pieces = [
                "int", "INT", "Int", "in", "t", "i", "n", "ss", "fi", " ", "-", "·", "\u{387}", "\u{37E}", "\u{301}",
                "\u{308}", "\u{338}", "=", "ı", "İ", "í", "Í", "ì\u{301}", "ñ", "Ñ", "ţ", "ṫ", "ß", "ẞ", "ﬁ",
                "\u{212A}",
                "\u{212B}", "K", "k", "ſ", "é", "日本", "ø", "\u{2000}", "\u{1FEF}", "\u{1FFD}", "ǈ", "Ǌ", "ǋ",
            ]
            var samples = ["Aéroport International", "İNT·ınt", "ﬁ int\u{301}", "Straße int", "K\u{212A}"]
            for _ in 0..<1_500 {
                let length = Int.random(in: 1...7, using: &generator)
                samples.append(
                    (0..<length).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined())
            }
            let queries: [[String]] = [["int"], ["in", "t"], ["fi", "ss", "k"], ["nj", "lj"], ["i"], ["s"]]
            let table = TableDescription(
                name: "v", entityName: "V", columns: [.init(name: "s", type: .text, isNullable: true)],
                primaryKey: [])
            let values = samples.enumerated().map { "(\($0.offset), \(Self.literal($0.element)))" } + ["(-1, NULL)"]
            for tokens in queries {
                for matching in [TextMatching.caseInsensitive, .caseAndDiacriticInsensitive] {
                    var arguments = ArgumentList(dialect: PostgresDialect())
                    var count = PostgresDialect().searchRelevanceCount("s", tokens, matching, table, &arguments)
                    // The arguments inline, last first ($10 before $1).
                    for (index, value) in arguments.values.enumerated().reversed() {
                        guard case .text(let text) = value else { Issue.record("\(value)"); continue }
                        count = count.replacingOccurrences(of: "$\(index + 1)", with: Self.literal(text))
                    }
                    let rows = try await PostgresTestServer.rawRows(
                        "SELECT n::text, \(count)::text FROM (VALUES " + values.joined(separator: ", ")
                            + ") AS \"v\"(n, \"s\") ORDER BY n",
                        schema: schema)
                    #expect(rows.count == samples.count + 1)
                    for row in rows {
                        let index = try #require(row[0].flatMap { Int($0) })
                        let sample = index < 0 ? nil : samples[index]
                        #expect(
                            row[1] == "\(TextSearch.exactWords(sample, tokens: tokens, matching))",
                            "\(tokens) \(matching) \(sample.map { $0.unicodeScalars.map { String($0.value, radix: 16) } } ?? [])"
                        )
                    }
                }
            }
        }
    }

    @Test("a text whose distinct words exceed what a tsvector holds fails its write naming the limit, writing nothing")
    func searchVectorCapacity() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.searchedNames)
            let airports = store.repository(TestAirport.self)
            // 600 kB of ASCII distinct words (past the inlined path's 500,000 bytes) is indexed.
            var generator = SplitMix64(state: 77)
            func words(_ count: Int, length: Int) -> String {
                (0..<count).map { _ in
                    String((0..<length).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &generator)! })
                }.joined(separator: " ")
            }
            var large = TestAirport.sample[0]
            large.name = words(60_000, length: 9) + " needle"
            try await airports.insert(large)
            #expect(try await airports.fetch(where: .matches(\.name, "needl")).map(\.icao) == [large.icao])
            // 1.2 MB of distinct words is refused, and the batch it came in writes nothing.
            var huge = TestAirport.sample[1]
            huge.name = words(120_000, length: 9)
            let error = await #expect(throws: DepotError.self) {
                try await airports.insert([TestAirport.sample[2], huge])
            }
            #expect("\(error.map { String(describing: $0) } ?? "")".contains("too large for a search index"))
            #expect(try await airports.count() == 1)
        }
    }

    @Test("rows written by plain SQL are found by search: the server keeps the index")
    func plainSQLWriters() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.searchedNames)
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            let schema = try #require(store.configuration.schema)
            _ = try await PostgresTestServer.rawRows(
                "INSERT INTO airports (icao, name, country, elevation, lat, lon) "
                    + "VALUES ('XXXX', 'Plainly Written Field', 'DE', 0, 0, 0)", schema: schema)
            _ = try await PostgresTestServer.rawRows(
                "UPDATE airports SET name = 'Renamed By Hand' WHERE icao = 'ENGM'", schema: schema)
            _ = try await PostgresTestServer.rawRows("DELETE FROM airports WHERE icao = 'ENBR'", schema: schema)
            #expect(try await airports.fetch(where: .matches(\.name, "plain writ")).map(\.icao) == ["XXXX"])
            #expect(try await airports.fetch(where: .matches(\.name, "renamed")).map(\.icao) == ["ENGM"])
            #expect(try await airports.count(where: .matches(\.name, "gardermoen")) == 0)
            #expect(try await airports.count(where: .matches(\.name, "flesland")) == 0)
            let missing = await #expect(throws: DepotError.self) {
                try await airports.fetch(where: .matches(\.city, "oslo"))
            }
            #expect(missing?.kind == .invalidQuery)
            #expect(missing?.message.contains("createSearchIndex") == true)
        }
    }
}
