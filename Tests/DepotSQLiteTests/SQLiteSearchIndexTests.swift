import Depot
import DepotTesting
import Foundation
import GRDB
import Testing

@testable import DepotSQLite

@Suite("SQLite search index", .timeLimit(.minutes(5)))
struct SQLiteSearchIndexTests {
    @Test("rows replaced by INSERT OR REPLACE and UPDATE OR REPLACE from another connection leave no stale words")
    func replaceLeavesNoStaleWords() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("search-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteStore(path: path)
        try await store.migrate(
            Migrations([
                Migration("1", [.createTable(TestAirport.self)]),
                Migration("2", [.createSearchIndex(TestAirport.self, \.name)]),
            ]))
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        // Another client: a plain GRDB connection with Depot's functions registered (what the
        // triggers call), writing the way GRDB's `.replace` conflict policy does.
        var configuration = Configuration()
        configuration.prepareDatabase { db in SQLiteFunctions.register(in: db) }
        let other = try DatabaseQueue(path: path, configuration: configuration)
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
        let words = try await store.sql(
            "SELECT count(*) FROM \"airports#name#words\" WHERE key = \("ENGM")", decoding: Int.self)
        #expect(words == [TextSearch.words(of: TestAirport.sample[1].name).count], "only the row's own words")
    }
}
