import Depot
import DepotTesting
import Testing

@testable import DepotSQLite

@Suite("SQLiteStore statement cache", .timeLimit(.minutes(10)))
struct SQLiteStatementCacheTests {
    @Test("a page size and offset per request do not add statements: LIMIT and OFFSET are bound")
    func limitsAreBound() async throws {
        let store = try SQLiteStore.temporary()
        let airports = try await store.seededSample()
        let before = try await store.engine.preparedStatementCount()
        try await store.write { tx in
            for size in 1...300 {
                let page = try await tx.repository(TestAirport.self).fetch(limit: size, offset: size % 7)
                #expect(page.count == min(size, TestAirport.sample.count - size % 7))
            }
        }
        let after = try await store.engine.preparedStatementCount()
        #expect(after - before < 10, "\(after - before) statements prepared for 300 page sizes")
        #expect(try await airports.count() == TestAirport.sample.count)
    }

    @Test("queries of ever new shapes keep at most the cache's limit of statements prepared")
    func cacheIsBounded() async throws {
        let store = try SQLiteStore.temporary()
        _ = try await store.seededSample()
        try await store.write { tx in
            for terms in 1...(SQLiteStatementCache.limit + 200) {
                // An OR of `terms` comparisons: a statement text of its own for each length.
                let filter = (0..<terms).map { \TestAirport.elevation == Double($0) }.reduce(\.icao == "none") {
                    $0 || $1
                }
                _ = try await tx.repository(TestAirport.self).count(where: filter)
            }
        }
        let prepared = try await store.engine.preparedStatementCount()
        #expect(prepared <= SQLiteStatementCache.limit + 10, "\(prepared) statements prepared")
    }
}

extension SQLiteStore {
    fileprivate func seededSample() async throws -> Repository<TestAirport> {
        let airports = repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        return airports
    }
}
