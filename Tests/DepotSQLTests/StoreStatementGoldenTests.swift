import Depot
import DepotSQL
import Testing

/// The exact SQL the shared store layer sends for transactions, catalog reads, migration locks
/// and what Depot installs, per dialect.
@Suite("Store statements golden SQL")
struct StoreStatementGoldenTests {
    let sqlite = SQLRenderer(dialect: .sqlite)
    let postgres = SQLRenderer(dialect: .postgres)

    @Test("transactions begin immediately on SQLite; savepoints are quoted and released by name on both")
    func transactions() {
        #expect(sqlite.begin.sql == "BEGIN IMMEDIATE")
        #expect(postgres.begin.sql == "BEGIN")
        for renderer in [sqlite, postgres] {
            #expect(renderer.commit.sql == "COMMIT")
            #expect(renderer.rollback.sql == "ROLLBACK")
            #expect(renderer.savepoint("depot_1").sql == "SAVEPOINT \"depot_1\"")
            #expect(renderer.releaseSavepoint("depot_1").sql == "RELEASE SAVEPOINT \"depot_1\"")
            #expect(renderer.rollbackToSavepoint("depot_1").sql == "ROLLBACK TO SAVEPOINT \"depot_1\"")
        }
    }

    @Test("migrations take an advisory lock on PostgreSQL and none on SQLite")
    func migrationLock() {
        #expect(sqlite.migrationLock == nil)
        #expect(
            postgres.migrationLock?.sql
                == "SELECT pg_advisory_xact_lock(74118002, hashtext(coalesce(current_schema(), '')))")
    }

    @Test("creating a table takes an advisory lock of its own on PostgreSQL and none on SQLite")
    func tableCreationLock() {
        #expect(sqlite.tableCreationLock == nil)
        #expect(
            postgres.tableCreationLock?.sql
                == "SELECT pg_advisory_xact_lock(74118003, hashtext(coalesce(current_schema(), '')))")
    }

    @Test("the catalog's columns query reads name, type, NOT NULL, key position and default")
    func catalogColumns() {
        #expect(
            sqlite.catalogColumns(of: "airports")
                == SQLStatement(
                    sql: "SELECT name, type, \"notnull\", pk, dflt_value FROM pragma_table_info(?) ORDER BY cid",
                    arguments: [.text("airports")]))
        #expect(
            postgres.catalogColumns(of: "airports").sql
                == "SELECT c.column_name::text, c.data_type::text, CASE WHEN c.is_nullable = 'NO' THEN '1' ELSE '0' END, "
                + "COALESCE(array_position(i.indkey::int2[], c.ordinal_position::int::int2) "
                + "- array_lower(i.indkey::int2[], 1) + 1, 0)::text, c.column_default::text "
                + "FROM information_schema.columns c LEFT JOIN pg_index i ON i.indisprimary AND i.indrelid = "
                + "to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1::text)) "
                + "WHERE c.table_schema = current_schema() AND c.table_name::text = $1::text "
                + "ORDER BY c.ordinal_position")
        let rows: [[String?]] = [["icao", "TEXT", "1", "1", nil], ["name", "TEXT", "0", "0", "'x'"]]
        #expect(
            SQLRenderer.catalogColumns(rows) == [
                CatalogColumn(name: "icao", type: "TEXT", isNotNull: true, keyPosition: 1, defaultSQL: nil),
                CatalogColumn(name: "name", type: "TEXT", isNotNull: false, keyPosition: 0, defaultSQL: "'x'"),
            ])
    }

    @Test("table lists leave the engine's own tables out")
    func catalogTables() {
        #expect(
            sqlite.catalogTables.sql
                == "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        #expect(
            postgres.catalogTables.sql
                == "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
    }

    @Test("catalog types read back as Depot types on both engines")
    func catalogTypes() {
        for type in ColumnType.allCases {
            for dialect: any SQLDialect in [SQLiteDialect(), PostgresDialect()] {
                let expected = type == .url ? ColumnType.text.rawValue : type.rawValue
                #expect(dialect.depotTypeName(fromCatalog: dialect.catalogTypeName(type)) == expected)
            }
        }
        #expect(PostgresDialect().catalogTypeName(.date) == "timestamp with time zone")
    }

    @Test("PostgreSQL setup: one locked transaction creates the schema and Depot's eight functions, marked")
    func postgresSetup() {
        let statements = PostgresDialect.setup(schema: "scratch")
        let setup = statements.map(\.sql)
        #expect(setup.count == 19)
        #expect(setup[0] == "SELECT pg_advisory_xact_lock(74118001, hashtext($1))")
        #expect(statements[0].arguments == [.text("scratch")])
        #expect(
            PostgresDialect.setup(schema: nil)[0].sql
                == "SELECT pg_advisory_xact_lock(74118001, hashtext(coalesce(current_schema(), '')))")
        #expect(setup[1] == "CREATE SCHEMA IF NOT EXISTS \"scratch\"")
        #expect(setup[2] == PostgresDialect.foldFunction)
        #expect(setup[3] == PostgresDialect.foldDiacriticsFunction)
        #expect(setup[4] == PostgresDialect.wordsFunction)
        // The search vector's helper first: the vector's SQL-standard body names it when created.
        #expect(setup[5] == PostgresDialect.searchVectorUnicodeFunction)
        #expect(setup[6] == PostgresDialect.searchVectorFunction)
        #expect(setup[7] == PostgresDialect.exactWordsFunction)
        #expect(
            setup[8]
                == "CREATE OR REPLACE FUNCTION depot_distance(lat1 double precision, lon1 double precision, "
                + "lat2 double precision, lon2 double precision) RETURNS double precision LANGUAGE sql IMMUTABLE "
                + "STRICT PARALLEL SAFE AS $$ SELECT 2.0::float8 * 6371.0088::float8 * asin(sqrt(least(1.0::float8, "
                + "sin(((lat2 - lat1) * (pi() / 180.0::float8)) / 2.0::float8) "
                + "* sin(((lat2 - lat1) * (pi() / 180.0::float8)) / 2.0::float8) "
                + "+ cos(lat1 * (pi() / 180.0::float8)) * cos(lat2 * (pi() / 180.0::float8)) "
                + "* sin(((lon2 - lon1) * (pi() / 180.0::float8)) / 2.0::float8) "
                + "* sin(((lon2 - lon1) * (pi() / 180.0::float8)) / 2.0::float8)))) $$")
        #expect(setup[9].hasPrefix("CREATE OR REPLACE FUNCTION depot_announce_commit() RETURNS trigger"))
        let version = PostgresDialect.setupVersion
        #expect(
            Array(setup[10..<18]) == [
                "COMMENT ON FUNCTION depot_fold(text) IS '\(version)'",
                "COMMENT ON FUNCTION depot_fold_diacritics(text) IS '\(version)'",
                "COMMENT ON FUNCTION depot_words(text) IS '\(version)'",
                "COMMENT ON FUNCTION depot_search_vector_unicode(text) IS '\(version)'",
                "COMMENT ON FUNCTION depot_search_vector(text) IS '\(version)'",
                "COMMENT ON FUNCTION depot_exact_words(text, text, boolean) IS '\(version)'",
                "COMMENT ON FUNCTION depot_distance(double precision, double precision, double precision, "
                    + "double precision) IS '\(version)'",
                "COMMENT ON FUNCTION depot_announce_commit() IS '\(version)'",
            ])
        #expect(PostgresDialect.setup(schema: nil).count == 18)
        #expect(setup.last?.hasPrefix("DO $$ DECLARE r record; BEGIN FOR r IN SELECT c.oid::regclass::text") == true)
        #expect(
            PostgresDialect.setupCheck.sql
                == "SELECT count(*) FROM pg_proc WHERE pronamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
                + "AND proname IN ('depot_fold', 'depot_fold_diacritics', 'depot_words', 'depot_search_vector_unicode', "
                + "'depot_search_vector', 'depot_exact_words', 'depot_distance', 'depot_announce_commit') "
                + "AND obj_description(oid, 'pg_proc') = $1")
        #expect(PostgresDialect.setupFunctionCount == 8)
        #expect(
            PostgresDialect.markWriter("id")
                == SQLStatement(sql: "SELECT set_config('depot.writer', $1, true)", arguments: [.text("id")]))
        #expect(PostgresDialect.dropSchema("a\"b").sql == "DROP SCHEMA IF EXISTS \"a\"\"b\" CASCADE")
    }

    @Test("raw SQL steps are keyed by dialect name and keep the description their checksums were made of")
    func rawSQLSteps() {
        let step = MigrationOperation.sql(sqlite: "SELECT 1", postgres: nil)
        #expect(step.description == "sql sqlite: SELECT 1 postgres: -")
    }
}

/// Scripts split at the semicolons that end statements, as PostgreSQL's parser would.
@Suite("SQL scripts")
struct SQLScriptTests {
    @Test("literals, quoted names, comments and dollar-quoted bodies keep their semicolons")
    func splitting() {
        #expect(
            SQLScript.statements("SELECT 'a;b'; SELECT \"x;y\" FROM t;") == ["SELECT 'a;b'", "SELECT \"x;y\" FROM t"])
        #expect(SQLScript.statements("SELECT 'it''s; fine'") == ["SELECT 'it''s; fine'"])
        #expect(
            SQLScript.statements("-- a; comment\nSELECT 1; /* b; */ SELECT 2") == [
                "-- a; comment\nSELECT 1", "/* b; */ SELECT 2",
            ])
        let function = "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$"
        let tagged = "CREATE FUNCTION g() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN RETURN 2; END $body$"
        #expect(SQLScript.statements("\(function);\n\(tagged);\nSELECT f()") == [function, tagged, "SELECT f()"])
        #expect(SQLScript.statements("SELECT $1; SELECT 2") == ["SELECT $1", "SELECT 2"])
        #expect(SQLScript.statements(" ; ;\n") == [])
    }
}
