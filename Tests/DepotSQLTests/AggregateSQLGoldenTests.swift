import Depot
import DepotSQL
import DepotTesting
import Foundation
import Testing

/// The exact SQL aggregates and groupings run, per dialect.
@Suite("Aggregate golden SQL")
struct AggregateSQLGoldenTests {
    let sqlite = SQLRenderer(dialect: .sqlite)
    let postgres = SQLRenderer(dialect: .postgres)
    let table = TestOrder.schema.table

    @Test("each aggregate per dialect: exact decimal sums, averages of the exact sum, byte-order min of text")
    func aggregates() {
        let query = AggregateQuery(
            table: table, predicate: (\TestOrder.customer == "ada").node,
            aggregates: [
                .init(.count, nil), .init(.count, "discount"), .init(.sum, "quantity"), .init(.sum, "total"),
                .init(.sum, "weight"), .init(.average, "quantity"), .init(.min, "customer"), .init(.max, "total"),
                .init(.max, "tracking"),
            ])
        let lite = sqlite.aggregate(query)
        #expect(
            lite.sql
                == "SELECT COUNT(*), COUNT(\"discount\"), COALESCE(depot_integer_sum(\"quantity\"), 0), "
                + "COALESCE(depot_decimal_sum(\"total\"), '0'), TOTAL(\"weight\"), "
                + "(depot_integer_total(\"quantity\") / NULLIF(COUNT(\"quantity\"), 0)), MIN(\"customer\"), "
                + "MAX(\"total\" COLLATE depot_decimal), MAX(\"tracking\") FROM \"orders\" WHERE \"customer\" = ?")
        #expect(lite.arguments == [.text("ada")])
        #expect(
            postgres.aggregate(query).sql
                == "SELECT COUNT(*), COUNT(\"discount\"), COALESCE(SUM(\"quantity\"), 0), "
                + "COALESCE(SUM(\"total\"), 0), COALESCE(SUM(\"weight\"), 0), "
                + "(CAST(SUM(\"quantity\") AS double precision) / NULLIF(COUNT(\"quantity\"), 0)), "
                + "MIN(\"customer\" COLLATE \"C\"), MAX(\"total\"), "
                + "CAST(MAX(CAST(\"tracking\" AS text) COLLATE \"C\") AS uuid) FROM \"orders\" "
                + "WHERE \"customer\" COLLATE \"C\" = $1")
    }

    @Test("group by, having, order by an aggregate then the groups, bound limit and offset")
    func grouped() {
        let count = AggregateTerm(.count, nil)
        let total = AggregateTerm(.sum, "total")
        let query = AggregateQuery(
            table: table, groupBy: ["region", "total"], aggregates: [count],
            having: .and([.compare(count, .greater, .integer(1)), .not(.compare(total, .less, .decimal(5)))]),
            ordering: [.aggregate(total, descending: true)], limit: 3, offset: 1)
        let lite = sqlite.aggregate(query)
        #expect(
            lite.sql
                == "SELECT \"region\", \"total\", COUNT(*) FROM \"orders\" "
                + "GROUP BY \"region\", \"total\" COLLATE depot_decimal "
                + "HAVING (COUNT(*) > ?) AND (NOT ((COALESCE(depot_decimal_sum(\"total\"), '0')) COLLATE depot_decimal < ?)) "
                + "ORDER BY (COALESCE(depot_decimal_sum(\"total\"), '0')) COLLATE depot_decimal DESC, \"region\", "
                + "\"total\" COLLATE depot_decimal LIMIT ? OFFSET ?")
        #expect(lite.arguments == [.integer(1), .decimal(5), .integer(3), .integer(1)])
        #expect(
            postgres.aggregate(query).sql
                == "SELECT \"region\", \"total\", COUNT(*) FROM \"orders\" GROUP BY \"region\", \"total\" "
                + "HAVING (COUNT(*) > $1) AND (NOT (COALESCE(SUM(\"total\"), 0) < $2)) "
                + "ORDER BY COALESCE(SUM(\"total\"), 0) DESC NULLS LAST, \"region\" COLLATE \"C\" ASC NULLS FIRST, "
                + "\"total\" ASC NULLS FIRST LIMIT $3 OFFSET $4")
    }

    @Test("a result table types each aggregate as stores return it")
    func resultTypes() {
        let query = AggregateQuery(
            table: table, groupBy: ["customer"],
            aggregates: [
                .init(.count, "total"), .init(.sum, "total"), .init(.average, "quantity"), .init(.min, "placed"),
            ])
        #expect(query.resultTable.columns.map(\.type) == [.text, .integer, .decimal, .double, .date])
        #expect(query.emptyResult.isEmpty, "grouped: no rows, no groups")
        var ungrouped = query
        ungrouped.groupBy = []
        #expect(ungrouped.emptyResult == [[.integer(0), .decimal(0), .null, .null]])
    }
}

/// The exact SQL a projection runs, per dialect.
@Suite("Projection golden SQL")
struct ProjectionSQLGoldenTests {
    @Test("a projection selects only its columns, in its order; filter and order may read others")
    func projection() {
        var query = SelectQuery(
            table: TestAirport.schema.table, predicate: (\TestAirport.country == "NO").node,
            ordering: [.column("elevation", descending: true)], limit: 3)
        query.columns = ["name", "iata"]
        #expect(
            SQLRenderer(dialect: .sqlite).select(query).sql
                == "SELECT \"name\", \"iata\" FROM \"airports\" WHERE \"country\" = ? ORDER BY \"elevation\" DESC, \"icao\" LIMIT ?"
        )
        #expect(
            SQLRenderer(dialect: .postgres).select(query).sql
                == "SELECT \"name\", \"iata\" FROM \"airports\" WHERE \"country\" COLLATE \"C\" = $1 "
                + "ORDER BY \"elevation\" DESC, \"icao\" COLLATE \"C\" LIMIT $2")
        #expect(query.resultTable.columns.map(\.name) == ["name", "iata"])
        #expect(query.resultTable.columns.map(\.type) == [.text, .text])
    }
}

/// The exact SQL a set-based update runs, per dialect.
@Suite("Update golden SQL")
struct UpdateSQLGoldenTests {
    @Test("an update assigns bound values (cast on PostgreSQL) and column additions in one statement")
    func update() {
        let query = UpdateQuery(
            table: TestOrder.schema.table, predicate: (\TestOrder.customer == "ada").node,
            assignments: [
                .init("region", .value(.null)), .init("quantity", .adding(column: "quantity", .integer(1))),
                .init("tracking", .value(.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))))),
            ])
        let lite = SQLRenderer(dialect: .sqlite).update(query)
        #expect(
            lite.sql
                == "UPDATE \"orders\" SET \"region\" = ?, \"quantity\" = depot_add(\"quantity\", ?), \"tracking\" = ? "
                + "WHERE \"customer\" = ?")
        #expect(lite.arguments.count == 4)
        #expect(
            SQLRenderer(dialect: .postgres).update(query).sql
                == "UPDATE \"orders\" SET \"region\" = CAST($1 AS text), \"quantity\" = \"quantity\" + CAST($2 AS bigint), "
                + "\"tracking\" = CAST($3 AS uuid) WHERE \"customer\" COLLATE \"C\" = $4")
    }
}

/// How hand-written statements render, per dialect.
@Suite("Hand-written SQL rendering")
struct HandWrittenSQLTests {
    @Test("values bind as placeholders in order, lists expand, identifiers are quoted, dialects pick their text")
    func rendering() throws {
        let code = "NO"
        let statement: SQL =
            "SELECT \(column: \TestAirport.name) FROM \(table: TestAirport.self) "
            + "WHERE \(column: \TestAirport.country) = \(code) AND iata IN \(list: ["OSL", "BGO"]) LIMIT \(3)"
        let lite = try SQLRenderer(dialect: .sqlite).render(statement)
        #expect(lite.sql == "SELECT \"name\" FROM \"airports\" WHERE \"country\" = ? AND iata IN (?, ?) LIMIT ?")
        #expect(lite.arguments == [.text("NO"), .text("OSL"), .text("BGO"), .integer(3)])
        let pg = try SQLRenderer(dialect: .postgres).render(statement)
        #expect(pg.sql == "SELECT \"name\" FROM \"airports\" WHERE \"country\" = $1 AND iata IN ($2, $3) LIMIT $4")
        #expect(statement.tables == ["airports"])
        let split = SQL(sqlite: "SELECT instr(name, \(code))", postgres: "SELECT strpos(name, \(code))")
        #expect(try SQLRenderer(dialect: .sqlite).render(split).sql == "SELECT instr(name, ?)")
        #expect(try SQLRenderer(dialect: .postgres).render(split).sql == "SELECT strpos(name, $1)")
        let shaped = try SQLRenderer(dialect: .sqlite).render("SELECT * FROM t", shapedAs: Reading.schema.table)
        #expect(shaped.sql == "SELECT \"station\", \"sequence\", \"value\" FROM (SELECT * FROM t) AS depot_sql")
        #expect(throws: DepotError.self) { try SQLRenderer(dialect: .sqlite).render("SELECT \(identifier: "a b")") }
    }
}

/// The SQL of a distance filter, and the boxes it draws.
@Suite("Geo golden SQL")
struct GeoSQLGoldenTests {
    @Test("within renders a bounding box an index can serve, then the exact distance")
    func within() {
        let oslo = Coordinate(latitude: 59.91, longitude: 10.75)
        let query = SelectQuery(
            table: TestAirport.schema.table,
            predicate: Filter<TestAirport>.within(
                kilometers: 50, of: oslo, latitude: \.latitude, longitude: \.longitude
            ).node)
        let lite = SQLRenderer(dialect: .sqlite).select(query)
        #expect(
            lite.sql.hasSuffix(
                "WHERE \"lat\" BETWEEN ? AND ? AND \"lon\" BETWEEN ? AND ? AND depot_distance(?, ?, \"lat\", \"lon\") <= ? "
                    + "ORDER BY \"icao\""))
        #expect(lite.arguments.count == 7)
        let pg = SQLRenderer(dialect: .postgres).select(query)
        #expect(pg.sql.contains("\"lat\" BETWEEN $1 AND $2 AND \"lon\" BETWEEN $3 AND $4"))
    }

    @Test("bounding boxes split at the antimeridian, open at the poles, and hold every point of the circle")
    func boxes() throws {
        let east = try #require(BoundingBox(around: Coordinate(latitude: 0, longitude: 179.9), kilometers: 100))
        #expect(east.longitudes.count == 2)
        #expect(east.longitudes[0].upperBound == 180 && east.longitudes[1].lowerBound == -180)
        let pole = try #require(BoundingBox(around: Coordinate(latitude: 89.5, longitude: 0), kilometers: 100))
        #expect(pole.longitudes.isEmpty, "a circle holding the pole spans every longitude")
        let odd = try #require(BoundingBox(around: Coordinate(latitude: 100, longitude: 0), kilometers: 10))
        #expect(odd.latitude == -90...90 && odd.longitudes.isEmpty)
        #expect(BoundingBox(around: Coordinate(latitude: 0, longitude: 0), kilometers: -1) == nil)
        // Points on the circle's edge, all around it, fall inside the box.
        for center in [Coordinate(latitude: 60, longitude: 179.5), Coordinate(latitude: -75, longitude: -179.9)] {
            let box = try #require(BoundingBox(around: center, kilometers: 300))
            for bearing in stride(from: 0.0, to: 360.0, by: 5.0) {
                let point = destination(from: center, kilometers: 299.999, bearing: bearing)
                #expect(box.latitude.contains(point.latitude))
                #expect(box.longitudes.isEmpty || box.longitudes.contains { $0.contains(point.longitude) })
            }
        }
    }

    /// The point `kilometers` from `start` along `bearing` (degrees), on the sphere.
    func destination(from start: Coordinate, kilometers: Double, bearing: Double) -> Coordinate {
        let angle = kilometers / GeoDistance.earthRadiusKilometers
        let (lat1, lon1, theta) = (start.latitude * .pi / 180, start.longitude * .pi / 180, bearing * .pi / 180)
        let lat2 = asin(sin(lat1) * cos(angle) + cos(lat1) * sin(angle) * cos(theta))
        var lon2 = lon1 + atan2(sin(theta) * sin(angle) * cos(lat1), cos(angle) - sin(lat1) * sin(lat2))
        lon2 = (lon2 + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        return Coordinate(latitude: lat2 * 180 / .pi, longitude: lon2 * 180 / .pi)
    }
}

/// The SQL of orders and filters that fold text.
@Suite("Folded text golden SQL")
struct FoldedTextSQLGoldenTests {
    @Test("a folded order sorts by the folding function's bytes; a diacritic-insensitive filter folds both sides")
    func folded() {
        let query = SelectQuery(
            table: TestAirport.schema.table,
            predicate: Filter<TestAirport>.contains(\.name, "São", .caseAndDiacriticInsensitive).node,
            ordering: [
                Ordering<TestAirport>.ascending(\.name, .caseInsensitive).term,
                Ordering<TestAirport>.descending(\.city, .caseAndDiacriticInsensitive).term,
            ])
        let lite = SQLRenderer(dialect: .sqlite).select(query)
        #expect(
            lite.sql.hasSuffix(
                "WHERE instr(CAST(depot_fold_diacritics(\"name\") AS BLOB), ?) > 0 "
                    + "ORDER BY depot_fold(\"name\"), depot_fold_diacritics(\"city\") DESC, \"icao\""))
        #expect(lite.arguments == [.blob(Data("sao".utf8))])
        #expect(
            SQLRenderer(dialect: .postgres).select(query).sql.hasSuffix(
                "ORDER BY depot_fold(\"name\") COLLATE \"C\" ASC NULLS FIRST, "
                    + "depot_fold_diacritics(\"city\") COLLATE \"C\" DESC NULLS LAST, \"icao\" COLLATE \"C\""
            ))
        #expect(
            TextFolding.foldIgnoringDiacritics("São Paulo, Örebro, Ångström, Łódź")
                == "sao paulo, orebro, angstrom, łodz")
    }
}

/// The SQL of searches and their index.
@Suite("Search golden SQL")
struct SearchSQLGoldenTests {
    @Test("matches is one FTS5 query of prefix terms on SQLite; relevance counts whole-word lookups, then length")
    func search() {
        let query = SelectQuery(
            table: TestAirport.schema.table, predicate: Filter<TestAirport>.matches(\.name, "Osl GARD").node,
            ordering: [Ordering<TestAirport>.relevance(\.name, to: "oslo gardermoen").term], limit: 5)
        let lite = SQLRenderer(dialect: .sqlite).select(query)
        let rows =
            "\"airports\".rowid IN (SELECT rowid FROM \"airports#name#words\" WHERE \"airports#name#words\" MATCH "
            + "depot_search_ready((SELECT count(*) FROM (SELECT 1 FROM \"airports#name#words#queue\" LIMIT 1)), ?))"
        #expect(
            lite.sql.hasSuffix(
                "WHERE \(rows) ORDER BY ((\(rows)) + (\(rows))) DESC, length(\"airports\".\"name\"), \"icao\" LIMIT ?"))
        #expect(
            lite.arguments == [
                .text("\"osl\"* AND \"gard\"*"), .text("\"oslo\""), .text("\"gardermoen\""), .integer(5),
            ])
        // A count of the matches alone reads the index alone (it holds each row once).
        let counted = SQLRenderer(dialect: .sqlite).count(
            SelectQuery(table: TestAirport.schema.table, predicate: Filter<TestAirport>.matches(\.name, "osl").node))
        #expect(
            counted.sql.hasPrefix("SELECT count(*) FROM \"airports#name#words\" WHERE \"airports#name#words\" MATCH "))
        #expect(counted.arguments == [.text("\"osl\"*")])
        // Ignoring diacritics: a token also matches the marked diacritic-free forms; relevance
        // counts in Swift (two words may fold to one token).
        let folded = SQLRenderer(dialect: .sqlite).select(
            SelectQuery(
                table: TestAirport.schema.table,
                predicate: Filter<TestAirport>.matches(\.name, "São Pau", .caseAndDiacriticInsensitive).node,
                ordering: [Ordering<TestAirport>.relevance(\.name, to: "São", .caseAndDiacriticInsensitive).term]))
        #expect(folded.sql.contains("ORDER BY depot_exact_words(\"airports\".\"name\", ?) DESC"))
        #expect(
            folded.arguments.prefix(2) == [
                .text("(\"sao\"* OR \"\u{1}sao\"*) AND (\"pau\"* OR \"\u{1}pau\"*)"), .text("sao"),
            ])
        let plain = SelectQuery(
            table: TestAirport.schema.table,
            predicate: Filter<TestAirport>.matches(\.name, "São", .caseAndDiacriticInsensitive).node)
        // PostgreSQL: one tsquery of prefix terms against the GIN index's expression.
        let pg = SQLRenderer(dialect: .postgres).select(plain)
        #expect(pg.sql.contains("WHERE depot_search_vector(\"airports\".\"name\") @@ $1::tsquery"))
        #expect(pg.arguments.first == .text("('sao':* | '\u{1}sao':*)"))
        // Relevance: a regular expression per ASCII token for ASCII rows; other rows by the server
        // function, when a pattern says one of their words may equal a token.
        let ranked = SQLRenderer(dialect: .postgres).select(query)
        #expect(
            ranked.sql.contains(
                "ORDER BY (CASE WHEN octet_length(\"airports\".\"name\") = char_length(\"airports\".\"name\") "
                    + "THEN (\"airports\".\"name\" ~* $2)::int + (\"airports\".\"name\" ~* $3)::int "
                    + "WHEN \"airports\".\"name\" ~ $5 THEN depot_exact_words(\"airports\".\"name\", $4, false) "
                    + "ELSE 0 END) DESC"))
        #expect(
            ranked.arguments.prefix(5) == [
                .text("'osl':* & 'gard':*"), .text("(^|[^a-zA-Z0-9])oslo([^a-zA-Z0-9]|$)"),
                .text("(^|[^a-zA-Z0-9])gardermoen([^a-zA-Z0-9]|$)"), .text("oslo\u{1}gardermoen"),
                .text(PostgresDialect.candidatePattern(["oslo", "gardermoen"], .caseInsensitive)),
            ])
        // A token that is not ASCII: every row that is not ASCII is counted by the function.
        let accented = SQLRenderer(dialect: .postgres).select(
            SelectQuery(
                table: TestAirport.schema.table, predicate: nil,
                ordering: [Ordering<TestAirport>.relevance(\.name, to: "Tromsø").term]))
        #expect(accented.sql.contains("ELSE depot_exact_words(\"airports\".\"name\", $1, false) END) DESC"))
        #expect(TextSearch.words(of: "Oslo Airport, Gardermoen — «OSL»") == ["oslo", "airport", "gardermoen", "osl"])
        #expect(TextSearch.tokens(of: "São  são SAO", .caseAndDiacriticInsensitive) == ["sao"])
    }

    @Test("a search of a table without exactly one key column fails naming the table, before any SQL")
    func searchNeedsOneKey() async {
        let keyless = TableDescription(
            name: "notes", entityName: "Note", columns: [.init(name: "text", type: .text, isNullable: false)],
            primaryKey: [])
        let error = await #expect(throws: DepotError.self) {
            try await SearchIndexCheck.require(
                .matches(column: "text", tokens: ["a"], matching: .caseInsensitive), table: keyless,
                dialect: SQLiteDialect.sqlite
            ) { _ in true }
        }
        #expect(error?.kind == .invalidQuery)
        #expect(error?.table == "notes")
        #expect("\(error.map { String(describing: $0) } ?? "")".contains("needs a one-column primary key; it has 0"))
        #expect(
            SearchIndexName.parts(of: "a#b#c#words#queue", suffix: "#words#queue").map { "\($0.table)|\($0.column)" }
                == "a#b|c")
        #expect(SearchIndexName.parts(of: "#words", suffix: "#words") == nil)
    }

    @Test("the search index is FTS5 and a queue on SQLite, a GIN index over depot_search_vector on PostgreSQL")
    func index() throws {
        let table = TestAirport.schema.table
        let lite = SQLRenderer(dialect: .sqlite).createSearchIndex(on: table, column: "name", schema: nil)
        #expect(lite.count == 7)
        #expect(
            lite[0]
                == "CREATE VIRTUAL TABLE \"airports#name#words\" USING fts5(\"name\", content='airports', "
                + "content_rowid='rowid', tokenize='depot', prefix='2 3 4', columnsize=0)")
        // The rows there are go in by rowid, in batches a migration reports.
        let fill = try #require(SQLiteDialect().searchIndexFill(on: table, column: "name"))
        #expect(
            fill.fill(7, 100)
                == SQLStatement(
                    sql:
                        "INSERT INTO \"airports#name#words\" (rowid, \"name\") SELECT rowid, \"name\" FROM \"airports\" "
                        + "WHERE rowid > ? ORDER BY rowid LIMIT ?", arguments: [.integer(7), .integer(100)]))
        // A replaced row is any holding the written key, or the written values of a unique index.
        var unique = table
        unique.indexes = [IndexDescription(name: "by_iata", table: "airports", columns: ["iata"], isUnique: true)]
        let guarded = SQLRenderer(dialect: .sqlite).createSearchIndex(on: unique, column: "name", schema: nil)
        #expect(
            guarded.contains { $0.hasSuffix("WHERE ((\"icao\" = NEW.\"icao\") OR (\"iata\" = NEW.\"iata\")); END") })
        #expect(
            guarded.contains {
                $0.hasPrefix(
                    "CREATE TRIGGER \"airports#name#words#rekey\" BEFORE UPDATE OF \"icao\", \"iata\" ON \"airports\" "
                        + "WHEN NEW.\"icao\" IS NOT OLD.\"icao\" OR NEW.\"iata\" IS NOT OLD.\"iata\" ")
            })
        #expect(
            lite.contains {
                $0.hasPrefix("CREATE TRIGGER \"airports#name#words#update\" AFTER UPDATE OF \"name\", \"icao\"")
            })
        // The triggers call no function of Depot's: any client can write the table.
        #expect(!lite.dropFirst(2).contains { $0.contains("depot_") || $0.contains("words\" (") })
        let pg = SQLRenderer(dialect: .postgres).createSearchIndex(on: table, column: "name", schema: "app")
        #expect(
            pg == [
                "CREATE INDEX \"airports#name#words\" ON \"app\".\"airports\" USING gin "
                    + "(\"app\".depot_search_vector(\"name\"))",
                "COMMENT ON INDEX \"app\".\"airports#name#words\" IS '\(PostgresDialect.searchIndexVersion)'",
            ])
        // Dropping takes the index, or a word table of an earlier version with its triggers.
        let dropped = SQLRenderer(dialect: .postgres).dropSearchIndex(on: table, column: "name", schema: "app")
        #expect(dropped.first == "DROP TRIGGER IF EXISTS \"airports#name#words#index\" ON \"app\".\"airports\"")
        #expect(dropped.last?.contains("IF k = 'i' THEN EXECUTE 'DROP INDEX \"app\".\"airports#name#words\"'") == true)
        // The vector calls the function it needs by identity (a SQL-standard body), which calls
        // only built-in functions; the others inline their folding.
        #expect(PostgresDialect.searchVectorFunction.contains("PARALLEL SAFE RETURN CASE"))
        #expect(!PostgresDialect.searchVectorUnicodeFunction.contains("depot_fold"))
        #expect(!PostgresDialect.exactWordsFunction.contains("depot_fold"))
        // Depot's functions call no other function of Depot's: the caller's search_path does not matter.
        #expect(PostgresDialect.wordsFunction.contains("regexp_split_to_table((CASE WHEN octet_length(t)"))
        #expect(PostgresDialect.wordsFunction.contains("'[\\u0001-\\u002F"))
        #expect(!PostgresDialect.wordsFunction.contains("depot_fold("))
        #expect(!PostgresDialect.foldDiacriticsFunction.contains("depot_fold("))
    }
}
