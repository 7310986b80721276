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

    @Test("case-insensitive operators fold the column in the server, with the needle folded")
    func folded() {
        let statement = postgres.select(query(.contains(\.name, "STRASSE", .caseInsensitive)))
        #expect(statement.sql.contains("WHERE strpos(depot_fold(\"name\"), $1) > 0"))
        #expect(statement.arguments == [.text("strasse")])
    }

    @Test(
        "the scalars a relevance candidate pattern reads hold every one of the BMP that folds to ASCII, a separator or nothing"
    )
    func foldedFormsAreComplete() {
        let listed = Set(PostgresDialect.foldedForms.map(\.scalar))
        var missing: [String] = []
        for value in UInt32(1)...0xFFFF {
            guard let scalar = Unicode.Scalar(value), !listed.contains(scalar) else { continue }
            let text = String(scalar)
            for image in [TextFolding.fold(text), TextFolding.foldIgnoringDiacritics(text)].map(\.unicodeScalars)
            where Array(image) != [scalar]
                && (image.isEmpty || image.contains { $0.isASCII || TextSearch.isSeparator($0) })
            {
                missing.append(String(value, radix: 16))
            }
        }
        #expect(missing.isEmpty, "\(missing.prefix(20))")
    }

    @Test("depot_fold is one inlinable SQL expression: ASCII lowered in C, then F replaces, one translate, NFC")
    func foldFunction() {
        let function = PostgresDialect.foldFunction
        #expect(function.hasPrefix("CREATE OR REPLACE FUNCTION depot_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE"))
        #expect(function.contains("CASE WHEN octet_length(t) = char_length(t) THEN lower(t COLLATE \"C\")"))
        #expect(!function.contains("STRICT"))  // a strict SQL function with a CASE body is not inlined
        let several = TextFolding.caseFolding.filter { $0.folded.unicodeScalars.count > 1 }.count
        #expect(function.components(separatedBy: "replace(").count - 1 == several)
        #expect(function.components(separatedBy: "translate(").count - 1 == 1)
        #expect(function.contains("replace(normalize(t, NFC), 'ß', 'ss')"))
        let setup = PostgresDialect.setup(schema: nil).map(\.sql)
        #expect(setup.contains(function))
        #expect(setup.contains("COMMENT ON FUNCTION depot_fold(text) IS '\(PostgresDialect.setupVersion)'"))
        #expect(PostgresDialect.setupCheck.arguments == [.text(PostgresDialect.setupVersion)])
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

    @Test("insert and upsert bind one array per column, and nothing else")
    func arrayInsert() {
        let insert = PostgresDialect().arrayWrite(
            into: Reading.schema.table, columns: ["station", "sequence", "value"], mode: .insert)
        #expect(
            insert.sql
                == "INSERT INTO \"readings\" (\"station\", \"sequence\", \"value\") SELECT * FROM "
                + "UNNEST(CAST($1 AS text[]), CAST($2 AS bigint[]), CAST($3 AS double precision[]))"
        )
        #expect(insert.columnTypes == [.text, .integer, .double])
        let upsert = PostgresDialect().arrayWrite(
            into: Reading.schema.table, columns: ["station", "sequence", "value"], mode: .upsert)
        #expect(
            upsert.sql.hasSuffix(
                "ON CONFLICT (\"station\", \"sequence\") DO UPDATE SET \"value\" = excluded.\"value\" "
                    + "WHERE \"readings\".\"value\" IS DISTINCT FROM excluded.\"value\"")
        )
        let keysOnly = PostgresDialect().arrayWrite(
            into: Reading.schema.table, columns: ["station", "sequence"], mode: .upsert)
        #expect(keysOnly.sql.hasSuffix("ON CONFLICT (\"station\", \"sequence\") DO NOTHING"))
    }

    @Test("update joins the arrays by key, sets only the batch's columns and skips rows holding them already")
    func arrayUpdate() {
        let update = PostgresDialect().arrayWrite(into: table, columns: ["icao", "name"], mode: .update)
        #expect(
            update.sql
                == "UPDATE \"airports\" SET \"name\" = u.c2 FROM UNNEST(CAST($1 AS text[]), "
                + "CAST($2 AS text[])) AS u(c1, c2) "
                + "WHERE \"airports\".\"icao\" = u.c1 AND (\"airports\".\"name\" IS DISTINCT FROM u.c2)")
    }
}
