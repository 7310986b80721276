import Depot
import DepotPostgres
import DepotSQL
import DepotTestSupport
import DepotTesting
import Testing

/// Whether PostgreSQL can answer Depot's own statements through a table's indexes: Depot compares
/// text by bytes (`COLLATE "C"`), which an index serves only on a column of that collation.
@Suite(
    "PostgreSQL: Depot's statements use the tables' indexes",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresIndexUseTests {
    /// The plan PostgreSQL makes for `query` as Depot renders it, with `values` for its
    /// parameters, sequential scans disabled (a plan that still scans cannot use an index).
    private static func plan(_ query: SelectQuery, _ values: [String], schema: String) async throws -> String {
        let statement = SQLRenderer(dialect: .postgres).select(query)
        let rows = try await PostgresTestServer.rawRows(
            "SET enable_seqscan = off; PREPARE depot_statement AS \(statement.sql); "
                + "EXPLAIN EXECUTE depot_statement(\(values.joined(separator: ", ")))", schema: schema)
        return rows.compactMap { $0.first ?? nil }.joined(separator: "\n")
    }

    @Test(
        "a key lookup, a key range in key order and a text filter on an indexed column use indexes on a table Depot made"
    )
    func textComparisonsUseIndexes() async throws {
        try await PostgresTestServer.withStore { store in
            let schema = try #require(store.configuration.schema)
            try await store.migrate(
                Migrations([
                    Migration(
                        "1 airports",
                        [
                            .createTable(TestAirport.self),
                            .createIndex("airports_by_country", on: "airports", columns: ["country"]),
                        ])
                ]))
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            let table = TestAirport.schema.table
            let lookup = SelectQuery(table: table, predicate: (\TestAirport.icao == "ENGM").node)
            let range = SelectQuery(
                table: table, predicate: (\TestAirport.icao >= "E").node,
                ordering: [Ordering<TestAirport>.ascending(\.icao).term], limit: 5)
            let country = SelectQuery(table: table, predicate: (\TestAirport.country == "NO").node)
            for (query, values) in [(lookup, ["'ENGM'"]), (range, ["'E'", "5"]), (country, ["'NO'"])] {
                let plan = try await Self.plan(query, values, schema: schema)
                #expect(plan.contains("Index") && !plan.contains("Seq Scan"), "\(plan)")
            }
        }
    }

    @Test("a table made with plain text columns (an earlier version, by hand) is named in one notice with the fix")
    func plainTextColumnsNoticed() async throws {
        let (logger, log) = CapturingLogHandler.logger(level: .notice)
        try await PostgresTestServer.withStore(logging: SQLLogging(logger: logger)) { store in
            let schema = try #require(store.configuration.schema)
            let airports = store.repository(TestAirport.self)
            #expect(try await airports.count() == 0)  // the schema and Depot's functions in place
            _ = try await PostgresTestServer.rawRows(
                "CREATE TABLE airports (icao text NOT NULL, iata text, name text NOT NULL, city text, "
                    + "country text NOT NULL, elevation double precision NOT NULL, lat double precision NOT NULL, "
                    + "lon double precision NOT NULL, PRIMARY KEY (icao))", schema: schema)
            try await airports.insert(TestAirport.sample)
            _ = try await airports.remove(where: \.country == "NO")
            let notices = log.lines.filter { $0.message.contains("default collation") }
            #expect(notices.count == 1, "\(log.lines.map(\.message))")
            #expect(notices.first?.message.contains("icao, iata, name, city, country") == true)
            #expect(notices.first?.message.contains("COLLATE \"C\"") == true)
        }
        // A table Depot makes has the collation: no notice.
        let (quiet, quietLog) = CapturingLogHandler.logger(level: .notice)
        try await PostgresTestServer.withStore(logging: SQLLogging(logger: quiet)) { store in
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            #expect(!quietLog.lines.contains { $0.message.contains("default collation") })
        }
    }
}
