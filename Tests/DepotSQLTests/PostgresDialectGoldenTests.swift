import Depot
import DepotSQL
import DepotTesting
import Testing

/// The SQL only the PostgreSQL dialect writes: array batch writes, folded copies, `= ANY`.
@Suite("PostgreSQL dialect golden SQL")
struct PostgresDialectGoldenTests {
    let postgres = SQLRenderer(dialect: .postgres)
    let table = TestAirport.schema.table

    func query(_ predicate: Filter<TestAirport>) -> SelectQuery {
        SelectQuery(table: table, predicate: predicate.node, ordering: [], limit: nil, offset: nil)
    }

    @Test("case-insensitive operators read the folded copy of the column, with the needle folded")
    func folded() {
        let statement = postgres.select(query(.contains(\.name, "STRASSE", .caseInsensitive)))
        #expect(statement.sql.contains("WHERE strpos(\"name#folded\", $1) > 0"))
        #expect(statement.arguments == [.text("strasse")])
        #expect(
            SQLDialect.postgres.foldedColumns(table) == [
                "icao#folded", "iata#folded", "name#folded", "city#folded", "country#folded",
            ])
        #expect(SQLDialect.sqlite.foldedColumns(table).isEmpty)
    }

    @Test("long IN lists bind one array literal, read by a hashed unnest subquery; quotes and backslashes escaped")
    func anyArray() {
        let codes = (0..<150).map { "K\($0)" } + ["a\"b\\c"]
        let statement = postgres.select(query(.in(\.icao, codes)))
        #expect(statement.sql.contains("WHERE \"icao\" COLLATE \"C\" IN (SELECT unnest(CAST($1 AS text[])))"))
        #expect(statement.arguments.count == 1)
        guard case .text(let literal) = statement.arguments.first else {
            Issue.record("expected one text argument")
            return
        }
        #expect(literal.hasPrefix("{\"K0\",\"K1\","))
        #expect(literal.hasSuffix(",\"a\\\"b\\\\c\"}"))
    }

    @Test("insert and upsert bind one array per column, folded copies included")
    func arrayInsert() {
        let insert = postgres.arrayWrite(
            into: Reading.schema.table, columns: ["station", "sequence", "value"], mode: .insert)
        #expect(
            insert.sql
                == "INSERT INTO \"readings\" (\"station\", \"sequence\", \"value\", \"station#folded\") SELECT * FROM "
                + "UNNEST(CAST($1 AS text[]), CAST($2 AS bigint[]), CAST($3 AS double precision[]), CAST($4 AS text[]))"
        )
        #expect(
            insert.parameters == [
                .column(position: 0, type: .text), .column(position: 1, type: .integer),
                .column(position: 2, type: .double), .folded(position: 0),
            ])
        let upsert = postgres.arrayWrite(
            into: Reading.schema.table, columns: ["station", "sequence", "value"], mode: .upsert)
        #expect(
            upsert.sql.hasSuffix("ON CONFLICT (\"station\", \"sequence\") DO UPDATE SET \"value\" = excluded.\"value\"")
        )
        let keysOnly = postgres.arrayWrite(into: Reading.schema.table, columns: ["station", "sequence"], mode: .upsert)
        #expect(keysOnly.sql.hasSuffix("ON CONFLICT (\"station\", \"sequence\") DO NOTHING"))
    }

    @Test("update joins the arrays by key and sets only the batch's columns")
    func arrayUpdate() {
        let update = postgres.arrayWrite(into: table, columns: ["icao", "name"], mode: .update)
        #expect(
            update.sql
                == "UPDATE \"airports\" SET \"name\" = u.c2, \"name#folded\" = u.c3 FROM UNNEST(CAST($1 AS text[]), "
                + "CAST($2 AS text[]), CAST($3 AS text[])) AS u(c1, c2, c3) "
                + "WHERE \"airports\".\"icao\" = u.c1")
    }
}
