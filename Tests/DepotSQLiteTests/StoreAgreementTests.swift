import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

@Suite("Stores agree", .timeLimit(.minutes(10)))
struct StoreAgreementTests {
    @Test("random filters, orders and pages give the same rows on the in-memory and SQLite stores")
    func randomQueriesAgree() async throws {
        var fuzzer = QueryFuzzer(random: SplitMix64(state: 2026))
        let rows = (0..<300).map { fuzzer.airport($0) }
        let memory = InMemoryStore()
        let sqlite = try SQLiteStore.temporary()
        try await memory.migrate(QueryFuzzer.searchMigrations)
        try await sqlite.migrate(QueryFuzzer.searchMigrations)
        try await memory.repository(TestAirport.self).upsert(rows)
        try await sqlite.repository(TestAirport.self).upsert(rows)
        var disagreements = 0
        for round in 0..<400 {
            let filter = fuzzer.filter()
            let ordering = fuzzer.ordering()
            let limit: Int? = fuzzer.chance(50) ? Int.random(in: 0..<20, using: &fuzzer.random) : nil
            let offset: Int? = fuzzer.chance(30) ? Int.random(in: 0..<10, using: &fuzzer.random) : nil
            let expected = try await memory.repository(TestAirport.self)
                .fetch(where: filter, orderBy: ordering, limit: limit, offset: offset).map(\.icao)
            let got = try await sqlite.repository(TestAirport.self)
                .fetch(where: filter, orderBy: ordering, limit: limit, offset: offset).map(\.icao)
            let countMemory = try await memory.repository(TestAirport.self).count(where: filter)
            let countSQLite = try await sqlite.repository(TestAirport.self).count(where: filter)
            if !expected.elementsEqual(got, by: { $0.utf8.elementsEqual($1.utf8) }) || countMemory != countSQLite {
                disagreements += 1
                if disagreements <= 3 {
                    Issue.record(
                        "round \(round): \(filter.node) order \(ordering.map(\.term)) limit \(limit ?? -1) offset \(offset ?? -1): in-memory \(expected) (\(countMemory)) vs SQLite \(got) (\(countSQLite))"
                    )
                }
            }
        }
        #expect(disagreements == 0)
    }
}
