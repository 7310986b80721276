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

    @Test("create table declares types, NOT NULL and the primary key")
    func createTable() {
        #expect(
            sqlite.createTable(table)
                == "CREATE TABLE IF NOT EXISTS \"airports\" (\"icao\" TEXT NOT NULL, \"iata\" TEXT, \"name\" TEXT NOT NULL, "
                + "\"city\" TEXT, \"country\" TEXT NOT NULL, \"elevation\" REAL NOT NULL, \"lat\" REAL NOT NULL, "
                + "\"lon\" REAL NOT NULL, PRIMARY KEY (\"icao\"))")
        #expect(
            postgres.createTable(Reading.schema.table)
                == "CREATE TABLE IF NOT EXISTS \"readings\" (\"station\" text NOT NULL, \"sequence\" bigint NOT NULL, "
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
                + "ORDER BY \"elevation\" DESC NULLS LAST, \"icao\" COLLATE \"C\" ASC NULLS FIRST LIMIT $3 OFFSET $4")
        #expect(pg.arguments == [.text("NO"), .double(500), .integer(20), .integer(40)])
    }

    @Test("row locks: what each protects, as PostgreSQL's locking clause; SQLite has one writer and none")
    func rowLocks() {
        for (lock, clause) in [
            (RowLock.referenced, " FOR KEY SHARE"), (.updated, " FOR NO KEY UPDATE"), (.removed, " FOR UPDATE"),
        ] {
            var locked = query(\.country == "NO")
            locked.lock = lock
            #expect(postgres.select(locked).sql.hasSuffix("NULLS FIRST" + clause), "\(lock)")
            #expect(sqlite.select(locked).sql.hasSuffix("ORDER BY \"icao\""), "\(lock)")
        }
    }

    @Test("no predicate selects everything in key order; offset alone")
    func selectAll() {
        #expect(sqlite.select(query()).sql == "SELECT \(columns) FROM \"airports\" ORDER BY \"icao\"")
        #expect(sqlite.select(query(offset: 5)).sql.hasSuffix("ORDER BY \"icao\" LIMIT -1 OFFSET ?"))
        #expect(sqlite.select(query(offset: 5)).arguments == [.integer(5)])
        #expect(postgres.select(query(offset: 5)).sql.hasSuffix("COLLATE \"C\" ASC NULLS FIRST OFFSET $1"))
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
        #expect(contains.sql.contains("WHERE instr(\"name\", ?) > 0"))
        #expect(contains.arguments == [.text("100%_")])
        let prefix = sqlite.select(query(.hasPrefix(\.name, "STRASSE", .caseInsensitive)))
        #expect(prefix.sql.contains("WHERE substr(depot_fold(\"name\"), 1, length(?)) = ?"))
        #expect(prefix.arguments == [.text("strasse"), .text("strasse")])
        let suffix = sqlite.select(query(.hasSuffix(\.name, "x")))
        #expect(suffix.sql.contains("WHERE substr(\"name\", length(\"name\") - length(?) + 1) = ?"))
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
                + "\"name\" = excluded.\"name\"")
        #expect(
            postgres.insert(into: table, columns: ["icao"], mode: .upsert)
                == "INSERT INTO \"airports\" (\"icao\") VALUES ($1) ON CONFLICT (\"icao\") DO NOTHING")
        #expect(
            sqlite.insert(into: table, columns: ["icao", "name", "iata"], mode: .update)
                == "UPDATE \"airports\" SET \"name\" = ?2, \"iata\" = ?3 WHERE \"icao\" = ?1")
        #expect(
            postgres.insert(into: Reading.schema.table, columns: ["station", "sequence", "value"], mode: .update)
                == "UPDATE \"readings\" SET \"value\" = $3 WHERE \"station\" = $1 AND \"sequence\" = $2")
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
