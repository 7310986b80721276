import Depot
import DepotSQL
import DepotTesting
import Testing

/// The SQL that predicates across relations and per-parent include limits compile to.
@Suite("Relation SQL golden SQL")
struct RelationSQLGoldenTests {
    let sqlite = SQLRenderer(dialect: .sqlite)
    let postgres = SQLRenderer(dialect: .postgres)

    @Test("a to-one match and a to-many none are uncorrelated IN subqueries that skip NULL keys")
    func subqueries() {
        let european = SelectQuery(
            table: RelAirport.schema.table, predicate: RelAirport.country.matches(\.continent == "EU").node)
        let statement = sqlite.select(european)
        #expect(
            statement.sql
                == "SELECT \"icao\", \"name\", \"country\", \"kind\", \"elevation\" FROM \"rel_airports\" WHERE "
                + "\"country\" IN (SELECT \"code\" FROM \"rel_countries\" WHERE \"code\" IS NOT NULL AND "
                + "(\"continent\" = ?)) ORDER BY \"icao\"")
        #expect(statement.arguments == [.text("EU")])
        let empty = SelectQuery(table: RelCountry.schema.table, predicate: RelCountry.airports.none().node)
        #expect(
            postgres.count(empty).sql
                == "SELECT COUNT(*) FROM \"rel_countries\" WHERE NOT (\"code\" COLLATE \"C\" IN (SELECT \"country\" "
                + "FROM \"rel_airports\" WHERE \"country\" IS NOT NULL AND (1 = 1)))")
    }

    @Test("a per-parent limit numbers rows per key in the include's order and keeps the first")
    func perParentLimit() {
        var query = SelectQuery(
            table: RelRunway.schema.table, predicate: .isIn(column: "airport", [.text("ENGM"), .text("KDEN")]),
            ordering: [.column("length", descending: true)])
        query.limitPerGroup = GroupLimit(column: "airport", limit: 2)
        let columns = "\"id\", \"airport\", \"length\", \"position\""
        #expect(
            sqlite.select(query).sql
                == "SELECT \(columns) FROM (SELECT \(columns), ROW_NUMBER() OVER (PARTITION BY \"airport\" ORDER BY "
                + "\"length\" DESC, \"id\") AS depot_rank FROM \"rel_runways\" WHERE \"airport\" IN (?, ?)) AS grouped "
                + "WHERE depot_rank <= ? ORDER BY \"length\" DESC, \"id\"")
        #expect(sqlite.select(query).arguments == [.text("ENGM"), .text("KDEN"), .integer(2)])
    }

    @Test("a per-parent limit binds its window's arguments before the filter's, as its SQL reads")
    func perParentLimitArguments() {
        let point = Coordinate(latitude: 60, longitude: 10)
        var query = SelectQuery(
            table: TestAirport.schema.table, predicate: .isIn(column: "country", [.text("NO")]),
            ordering: [Ordering<TestAirport>.nearest(to: point, latitude: \.latitude, longitude: \.longitude).term])
        query.limitPerGroup = GroupLimit(column: "country", limit: 3)
        let statement = sqlite.select(query)
        #expect(
            statement.arguments == [.double(60), .double(10), .text("NO"), .integer(3), .double(60), .double(10)])
        let window = statement.sql.range(of: "ROW_NUMBER()")?.lowerBound
        let filter = statement.sql.range(of: "WHERE \"country\" IN")?.lowerBound
        #expect(window != nil && filter != nil, "\(statement.sql)")
        if let window, let filter { #expect(window < filter, "the window is numbered after the filter") }
    }

    @Test("a subquery over a table that does not exist yet answers as empty")
    func missingTables() {
        let node = RelCountry.airports.none(\.kind == "large").node
        #expect(node.subqueryTables.map(\.name) == ["rel_airports"])
        #expect(node.replacingSubqueries(over: ["rel_airports"]) == .not(.constant(false)))
        #expect(node.replacingSubqueries(over: ["other"]) == node)
    }
}
