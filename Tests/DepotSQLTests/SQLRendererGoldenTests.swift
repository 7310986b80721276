import Depot
import DepotSQL
import DepotTesting
import Foundation
import Testing

/// The exact SQL each operation runs, per dialect.
@Suite("SQL renderer golden SQL")
struct SQLRendererGoldenTests {
    let sqlite = SQLRenderer(dialect: .sqlite)
    let postgres = SQLRenderer(dialect: .postgres)
    let table = TestAirport.schema.table
    let columns = "\"icao\", \"iata\", \"name\", \"city\", \"country\", \"elevation\", \"lat\", \"lon\""

    func query(
        _ predicate: Filter<TestAirport>? = nil, _ ordering: [Ordering<TestAirport>] = [], limit: Int? = nil,
        offset: Int? = nil
    ) -> SelectQuery {
        SelectQuery(
            table: table, predicate: predicate?.node, ordering: ordering.map(\.term), limit: limit, offset: offset)
    }

    @Test("a per-dialect statement spliced into another carries each dialect's text; none is ever dropped")
    func splicedDialects() throws {
        let clause = SQL(sqlite: "WHERE instr(name, \("x")) > 0", postgres: "WHERE strpos(name, \("x")) > 0")
        let statement: SQL = "DELETE FROM \(table: TestAirport.self) \(clause) AND id > \(1)"
        let lite = try sqlite.render(statement)
        #expect(lite.sql == "DELETE FROM \"airports\" WHERE instr(name, ?) > 0 AND id > ?")
        #expect(lite.arguments == [.text("x"), .integer(1)])
        let pg = try postgres.render(statement)
        #expect(pg.sql == "DELETE FROM \"airports\" WHERE strpos(name, $1) > 0 AND id > $2")
        let summed = try postgres.render("SELECT 1 " + SQL(sqlite: "WHERE 1", postgres: "WHERE true"))
        #expect(summed.sql == "SELECT 1 WHERE true")
    }

    @Test("an empty list is an empty set of the list's type; a hand-written read outside a transaction is read-only")
    func emptyListsAndReadOnly() throws {
        let statement: SQL =
            "SELECT 1 WHERE x NOT IN \(list: [String]()) AND y IN \(list: [Int]()) AND z IN \(list: [UUID]())"
        #expect(
            try sqlite.render(statement).sql
                == "SELECT 1 WHERE x NOT IN (SELECT NULL WHERE 0) AND y IN (SELECT NULL WHERE 0) "
                + "AND z IN (SELECT NULL WHERE 0)")
        #expect(
            try postgres.render(statement).sql
                == "SELECT 1 WHERE x NOT IN (SELECT CAST(NULL AS text) WHERE FALSE) "
                + "AND y IN (SELECT CAST(NULL AS bigint) WHERE FALSE) AND z IN (SELECT CAST(NULL AS uuid) WHERE FALSE)")
        #expect(postgres.readOnlyBegin?.sql == "BEGIN READ ONLY")
        #expect(sqlite.readOnlyBegin == nil)
    }

    @Test("a JSON value compares as jsonb on PostgreSQL, as its canonical text on SQLite")
    func jsonComparison() {
        let table = AllTypes.schema.table
        let runway = Runway(designator: "09", lengthMeters: 1, lights: [])
        func select(_ renderer: SQLRenderer, _ filter: Filter<AllTypes>) -> String {
            renderer.select(SelectQuery(table: table, predicate: filter.node)).sql
        }
        #expect(select(postgres, \.runway == runway).contains("WHERE \"runway\" = CAST($1 AS jsonb)"))
        #expect(
            select(postgres, .in(\.optionalRunway, [runway, runway]))
                .contains("WHERE \"optional_runway\" IN (CAST($1 AS jsonb), CAST($2 AS jsonb))"))
        #expect(select(sqlite, \.runway != runway).contains("WHERE \"runway\" <> ?"))
    }

    @Test("create table declares types, NOT NULL and the primary key")
    func createTable() {
        #expect(
            sqlite.createTable(table)
                == "CREATE TABLE IF NOT EXISTS \"airports\" (\"icao\" TEXT NOT NULL, \"iata\" TEXT, \"name\" TEXT NOT NULL, "
                + "\"city\" TEXT, \"country\" TEXT NOT NULL, \"elevation\" REAL NOT NULL, \"lat\" REAL NOT NULL, "
                + "\"lon\" REAL NOT NULL, PRIMARY KEY (\"icao\"))")
        #expect(
            postgres.createTable(Reading.schema.table)
                == "CREATE TABLE IF NOT EXISTS \"readings\" (\"station\" text COLLATE \"C\" NOT NULL, \"sequence\" bigint NOT NULL, "
                + "\"value\" double precision, PRIMARY KEY (\"station\", \"sequence\"))")
    }

    @Test("select with comparisons, AND/OR/NOT, order, and a bound limit and offset")
    func selectWithEverything() {
        let high: Filter<TestAirport> = \.elevation > 500
        let coded: Filter<TestAirport> = !(\.iata == nil)
        let filter: Filter<TestAirport> = \.country == "NO" && (high || coded)
        let statement = sqlite.select(query(filter, [.descending(\.elevation)], limit: 20, offset: 40))
        #expect(
            statement.sql
                == "SELECT \(columns) FROM \"airports\" WHERE (\"country\" = ?) AND ((\"elevation\" > ?) OR "
                + "(NOT (\"iata\" IS NULL))) ORDER BY \"elevation\" DESC, \"icao\" LIMIT ? OFFSET ?")
        #expect(statement.arguments == [.text("NO"), .double(500), .integer(20), .integer(40)])
        let norwegian: Filter<TestAirport> = \.country == "NO"
        let pg = postgres.select(query(norwegian && high, [.descending(\.elevation)], limit: 20, offset: 40))
        #expect(
            pg.sql
                == "SELECT \(columns) FROM \"airports\" WHERE (\"country\" COLLATE \"C\" = $1) AND (\"elevation\" > $2) "
                + "ORDER BY \"elevation\" DESC, \"icao\" COLLATE \"C\" LIMIT $3 OFFSET $4")
        #expect(pg.arguments == [.text("NO"), .double(500), .integer(20), .integer(40)])
    }

    @Test("row locks: what each protects, as PostgreSQL's locking clause; SQLite has one writer and none")
    func rowLocks() {
        for (lock, clause) in [
            (RowLock.referenced, " FOR KEY SHARE"), (.updated, " FOR NO KEY UPDATE"), (.removed, " FOR UPDATE"),
        ] {
            var locked = query(\.country == "NO")
            locked.lock = lock
            #expect(postgres.select(locked).sql.hasSuffix("ORDER BY \"icao\" COLLATE \"C\"" + clause), "\(lock)")
            #expect(sqlite.select(locked).sql.hasSuffix("ORDER BY \"icao\""), "\(lock)")
        }
    }

    @Test("no predicate selects everything in key order; offset alone")
    func selectAll() {
        #expect(sqlite.select(query()).sql == "SELECT \(columns) FROM \"airports\" ORDER BY \"icao\"")
        #expect(sqlite.select(query(offset: 5)).sql.hasSuffix("ORDER BY \"icao\" LIMIT -1 OFFSET ?"))
        #expect(sqlite.select(query(offset: 5)).arguments == [.integer(5)])
        #expect(postgres.select(query(offset: 5)).sql.hasSuffix("ORDER BY \"icao\" COLLATE \"C\" OFFSET $1"))
    }

    @Test("IN lists bind each value; an empty list is false")
    func membership() {
        let statement = sqlite.select(query(.in(\.country, ["NO", "SE"])))
        #expect(statement.sql.contains("WHERE \"country\" IN (?, ?) ORDER BY"))
        #expect(statement.arguments == [.text("NO"), .text("SE")])
        #expect(sqlite.select(query(.in(\.country, [String]()))).sql.contains("WHERE 1 = 0 ORDER BY"))
        #expect(postgres.select(query(.in(\.country, ["NO", "SE"]))).sql.contains("IN ($1, $2)"))
    }

    @Test("long IN lists bind one JSON array on SQLite; other kinds fall back to one parameter each")
    func longLists() {
        let keys = (0..<101).map { "K\($0)\"" }
        let statement = sqlite.select(query(.in(\.icao, keys)))
        #expect(statement.sql.contains("WHERE \"icao\" IN (SELECT value FROM json_each(?)) ORDER BY"))
        #expect(statement.arguments.count == 1)
        #expect(
            statement.arguments.first
                == .text("[" + keys.map { "\"\($0.dropLast())\\\"\"" }.joined(separator: ",") + "]"))
        let short = sqlite.select(query(.in(\.icao, Array(keys.prefix(100)))))
        #expect(short.arguments.count == 100)
        let doubles = sqlite.select(query(.in(\.elevation, (0..<200).map(Double.init))))
        #expect(doubles.arguments.count == 200)
    }

    @Test("text operators bind the needle; case-insensitive ones fold both sides")
    func textOperators() {
        let contains = sqlite.select(query(.contains(\.name, "100%_")))
        // SQLite compares bytes: its text functions stop at U+0000.
        #expect(contains.sql.contains("WHERE instr(CAST(\"name\" AS BLOB), ?) > 0"))
        #expect(contains.arguments == [.blob(Data("100%_".utf8))])
        let prefix = sqlite.select(query(.hasPrefix(\.name, "STRASSE", .caseInsensitive)))
        #expect(
            prefix.sql.contains(
                "WHERE (length(CAST(depot_fold(\"name\") AS BLOB)) >= ? "
                    + "AND substr(CAST(depot_fold(\"name\") AS BLOB), 1, ?) = ?)"))
        #expect(prefix.arguments == [.integer(7), .integer(7), .blob(Data("strasse".utf8))])
        let suffix = sqlite.select(query(.hasSuffix(\.name, "é")))
        #expect(
            suffix.sql.contains("WHERE (length(CAST(\"name\" AS BLOB)) >= ? AND substr(CAST(\"name\" AS BLOB), ?) = ?)")
        )
        #expect(suffix.arguments == [.integer(2), .integer(-2), .blob(Data("é".utf8))])
        #expect(sqlite.select(query(.hasSuffix(\.name, ""))).sql.contains("WHERE (\"name\" IS NOT NULL OR NULL)"))
        #expect(postgres.select(query(.contains(\.name, "x"))).sql.contains("WHERE strpos(\"name\", $1) > 0"))
        #expect(postgres.select(query(.hasPrefix(\.name, "x"))).sql.contains("WHERE starts_with(\"name\", $1)"))
    }

    @Test("nearest orders by the registered haversine function, NULLs last")
    func nearest() {
        let statement = sqlite.select(
            query(
                nil,
                [.nearest(to: Coordinate(latitude: 60, longitude: 11), latitude: \.latitude, longitude: \.longitude)],
                limit: 5))
        #expect(statement.sql.hasSuffix("ORDER BY depot_distance(?, ?, \"lat\", \"lon\") NULLS LAST, \"icao\" LIMIT ?"))
        #expect(statement.arguments == [.double(60), .double(11), .integer(5)])
    }

    @Test("decimal columns compare through the exact-decimal collation on SQLite")
    func decimals() {
        let statement = sqlite.select(
            SelectQuery(table: AllTypes.schema.table, predicate: (\AllTypes.decimal > Decimal(1)).node))
        #expect(statement.sql.contains("WHERE \"decimal\" COLLATE depot_decimal > ?"))
    }

    @Test("count, with and without limit")
    func count() {
        let plain = sqlite.count(query(\.country == "NO"))
        #expect(plain.sql == "SELECT COUNT(*) FROM \"airports\" WHERE \"country\" = ?")
        let limited = sqlite.count(query(nil, limit: 3))
        #expect(limited.sql == "SELECT COUNT(*) FROM (SELECT 1 FROM \"airports\" LIMIT ?) AS counted")
        #expect(limited.arguments == [.integer(3)])
    }

    @Test("insert, upsert and delete statements")
    func writes() {
        let names = table.columns.map(\.name)
        #expect(
            sqlite.insert(into: table, columns: names, mode: .insert)
                == "INSERT INTO \"airports\" (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        #expect(
            sqlite.insert(into: table, columns: ["icao", "name"], mode: .upsert)
                == "INSERT INTO \"airports\" (\"icao\", \"name\") VALUES (?, ?) ON CONFLICT (\"icao\") DO UPDATE SET "
                + "\"name\" = excluded.\"name\" WHERE \"airports\".\"name\" IS NOT excluded.\"name\"")
        #expect(
            postgres.insert(into: table, columns: ["icao"], mode: .upsert)
                == "INSERT INTO \"airports\" (\"icao\") VALUES ($1) ON CONFLICT (\"icao\") DO NOTHING")
        #expect(
            sqlite.insert(into: table, columns: ["icao", "name", "iata"], mode: .update)
                == "UPDATE \"airports\" SET \"name\" = ?2, \"iata\" = ?3 WHERE \"icao\" = ?1 "
                + "AND (\"name\" IS NOT ?2 OR \"iata\" IS NOT ?3)")
        #expect(
            postgres.insert(into: Reading.schema.table, columns: ["station", "sequence", "value"], mode: .update)
                == "UPDATE \"readings\" SET \"value\" = $3 WHERE \"station\" = $1 AND \"sequence\" = $2 "
                + "AND (\"value\" IS DISTINCT FROM $3)")
        let delete = sqlite.delete(from: table, where: (\TestAirport.country == "NO").node)
        #expect(delete.sql == "DELETE FROM \"airports\" WHERE \"country\" = ?")
        #expect(sqlite.delete(from: table, where: nil).sql == "DELETE FROM \"airports\"")
    }

    @Test("statement descriptions hide bound values")
    func descriptionHidesValues() {
        let statement = sqlite.select(query(\.name == "secret"))
        #expect(!statement.description.contains("secret"))
        #expect(statement.description.contains("[1 argument(s)]"))
    }
}
