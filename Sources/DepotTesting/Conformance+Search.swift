import Depot
import Foundation
import Testing

/// The sample's ICAO codes whose `name` matches `query` by ``TextSearch``'s definition, in key order.
private func expectedMatches(_ rows: [TestAirport], _ query: String, _ matching: TextMatching) -> [String] {
    let tokens = TextSearch.tokens(of: query, matching)
    return rows.filter { TextSearch.matches($0.name, tokens: tokens, matching) }.map(\.icao)
        .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
}

/// The search indexes of the search cases: airport names and cities.
private let searchMigrations = Migrations([
    Migration("1 airports", [.createTable(TestAirport.self)]),
    Migration(
        "2 search", [.createSearchIndex(TestAirport.self, \.name), .createSearchIndex(TestAirport.self, \.city)]),
])

extension StoreConformance {
    static let searchCases: [ConformanceCase] = [
        ConformanceCase("matches finds rows whose words start with each query word, from an index kept up to date") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            let sample = TestAirport.sample
            // Half the rows before the index (filled from them), half after (by its triggers).
            try await airports.insert(sample.prefix(5))
            if let migratable = store as? any MigratableStore { try await migratable.migrate(searchMigrations) }
            try await airports.insert(sample.dropFirst(5))
            for (query, matching) in [
                ("osl gard", TextMatching.caseInsensitive), ("AIRPORT", .caseInsensitive), ("são", .caseInsensitive),
                ("sao", .caseAndDiacriticInsensitive), ("sao", .caseInsensitive), ("air ber", .caseInsensitive),
                ("ålesund vigra", .caseInsensitive), ("alesund", .caseAndDiacriticInsensitive),
                ("100", .caseInsensitive),
                ("off", .caseInsensitive), ("zzz", .caseInsensitive),
            ] {
                let found = try await airports.fetch(where: .matches(\.name, query, matching)).map(\.icao)
                #expect(found == expectedMatches(sample, query, matching), "\(query) (\(matching))")
            }
            #expect(try await airports.fetch(where: .matches(\.name, "osl gard")).map(\.icao) == ["ENGM"])
            #expect(
                try await airports.fetch(where: .matches(\.name, "sao", .caseAndDiacriticInsensitive)).map(\.icao) == [
                    "SBSP"
                ])
            #expect(try await airports.count(where: .matches(\.name, "sao")) == 0, "diacritics count unless ignored")
            #expect(try await airports.count(where: .matches(\.name, " ,;")) == sample.count, "no words: every row")
            #expect(
                try await airports.count(where: .matches(\.city, "o"))
                    == expectedMatches(
                        sample.map {
                            var row = $0; row.name = $0.city ?? ""; return row
                        }.filter { $0.name != "" }, "o",
                        .caseInsensitive
                    ).count, "a NULL city matches nothing")
            #expect(
                try await airports.count(where: !.matches(\.city, "oslo"))
                    == sample.count - 1, "NOT of a search is two-valued: NULL cities count")
        },
        ConformanceCase("the search index follows every write: upsert, patch, update, remove, replace") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            if let migratable = store as? any MigratableStore { try await migratable.migrate(searchMigrations) }
            try await airports.insert(TestAirport.sample)
            var oslo = try #require(try await airports.find("ENGM"))
            oslo.name = "Zebra Field"
            try await airports.upsert(oslo)
            #expect(try await airports.count(where: .matches(\.name, "gard")) == 0)
            #expect(try await airports.fetch(where: .matches(\.name, "zeb fie")).map(\.icao) == ["ENGM"])
            try await airports.apply([Patch<TestAirport>(key: "ENBR").set(\.name, "Flesland Zebra")])
            #expect(try await airports.fetch(where: .matches(\.name, "zebra")).map(\.icao) == ["ENBR", "ENGM"])
            try await airports.update(where: \.icao == "ENGM", set: \.name, to: "Quiet Meadow")
            #expect(try await airports.fetch(where: .matches(\.name, "zebra")).map(\.icao) == ["ENBR"])
            try await airports.remove("ENBR")
            #expect(try await airports.count(where: .matches(\.name, "zebra")) == 0)
            try await airports.replace(
                where: \.country == "NO", with: [TestAirport(icao: "ENXX", name: "Zebra Crossing", country: "NO")])
            #expect(try await airports.fetch(where: .matches(\.name, "zebra cross")).map(\.icao) == ["ENXX"])
            #expect(try await airports.count(where: .matches(\.name, "quiet")) == 0, "replaced rows leave the index")
        },
        ConformanceCase("words longer than an index entry are stored and found by any prefix, on every store") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            if let migratable = store as? any MigratableStore { try await migratable.migrate(searchMigrations) }
            // 1,000 CJK characters without a space (3,000 bytes: past a B-tree entry), and two words
            // that share their first 300 characters.
            let cjk = String(repeating: "漢字", count: 500)
            let long = String(repeating: "a", count: 300)
            let rows = [
                TestAirport(icao: "L1", name: cjk, country: "ZZ"),
                TestAirport(icao: "L2", name: "x " + long + "b", country: "ZZ"),
                TestAirport(icao: "L3", name: long + "c y", country: "ZZ"),
                TestAirport(icao: "L4", name: String(long.prefix(250)), country: "ZZ"),
            ]
            try await airports.insert(rows)
            for query in [
                "漢字", String(cjk.prefix(250)), cjk, String(long.prefix(10)), String(long.prefix(250)), long,
                long + "b", long + "c", long + "bb", String(cjk.prefix(999)) + "x",
            ] {
                let found = try await airports.fetch(where: .matches(\.name, query)).map(\.icao)
                #expect(
                    found == expectedMatches(rows, query, .caseInsensitive),
                    "a query of \(query.count) characters starting \(query.prefix(3))")
            }
            #expect(try await airports.fetch(where: .matches(\.name, long + "b")).map(\.icao) == ["L2"])
            #expect(try await airports.count(where: .matches(\.name, cjk)) == 1)
            var changed = rows[1]
            changed.name = long + "d"
            try await airports.upsert(changed)
            #expect(try await airports.count(where: .matches(\.name, long + "b")) == 0)
            #expect(try await airports.fetch(where: .matches(\.name, long + "d")).map(\.icao) == ["L2"])
        },
        ConformanceCase("relevance orders whole-word matches first, then shorter texts, the same on every store") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            if let migratable = store as? any MigratableStore { try await migratable.migrate(searchMigrations) }
            let rows = [
                ("R1", "Oslofjord Field"), ("R2", "Oslo Airport"), ("R3", "Oslo"), ("R4", "Old Oslo Strip Oslo"),
                ("R5", "Osloveien Oslo Oslofjord"), ("R6", "Nowhere"),
            ].map { TestAirport(icao: $0.0, name: $0.1, country: "NO") }
            try await airports.insert(rows)
            let found = try await airports.fetch(
                where: .matches(\.name, "oslo"), orderBy: [.relevance(\.name, to: "oslo")]
            ).map(\.icao)
            #expect(found == ["R3", "R2", "R4", "R5", "R1"], "one whole word, shortest first, then none: \(found)")
            let two = try await airports.fetch(
                where: .matches(\.name, "osl"), orderBy: [.relevance(\.name, to: "oslo oslofjord")], limit: 2
            ).map(\.icao)
            #expect(two == ["R5", "R3"], "two whole words, then one and the shortest: \(two)")
            let shortest = try await airports.fetch(orderBy: [.relevance(\.name, to: " - ")]).map(\.icao)
            #expect(
                shortest == ["R3", "R6", "R2", "R1", "R4", "R5"], "a query without words orders by length: \(shortest)")
        },
    ]
}
