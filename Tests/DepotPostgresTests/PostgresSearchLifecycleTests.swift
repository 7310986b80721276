import Depot
import DepotPostgres
import DepotSQL
import DepotTestSupport
import DepotTesting
import Foundation
import Synchronization
import Testing

// The search index's whole life on PostgreSQL (trust issue, items 3–7; #40's GIN index). Axes:
// schema change (rename column, rename table, drop + recreate, erase + recreate) × writer (Depot, a
// client with psql's default search_path, TRUNCATE, INSERT … ON CONFLICT, psql's COPY in another
// process) × version (a word table of an earlier Depot, functions of another version). Extremes
// (long words, every plane, the tsvector's 1 MB) are in PostgresSearchIndexTests. The build's
// progress: a build that ends, one that fails; followed from the primary with replicas
// (PostgresReplicaTests). After each: writes work, `.matches` equals a
// scan, and nothing orphaned is left in the catalog.

@Suite(
    "PostgreSQL search index life cycle",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"), .timeLimit(.minutes(10)))
struct PostgresSearchLifecycleTests {
    static let v1 = Migrations([
        Migration("1", [.createTable(TestAirport.self)]),
        Migration("2", [.createSearchIndex(TestAirport.self, \.name)]),
    ])

    /// The keys whose name has a word starting with `prefix`, by a scan in Swift.
    static func scan(_ airports: [TestAirport], _ prefix: String) -> [String] {
        airports.filter { airport in
            TextSearch.tokens(of: airport.name, .caseInsensitive).contains { $0.hasPrefix(prefix) }
        }.map(\.icao).sorted()
    }

    @Test("a client with psql's default search_path writes a searchable table in the store's own schema")
    func foreignSearchPath() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.v1)
            let schema = try #require(store.configuration.schema)
            // No `SET search_path`: the session's default ("$user", public).
            _ = try await PostgresTestServer.rawRows(
                "INSERT INTO \"\(schema)\".\"airports\" (icao, name, country, elevation, lat, lon) "
                    + "VALUES ('XFOR', 'Foreign Field', 'ZZ', 0, 0, 0)")
            let found = try await store.repository(TestAirport.self).fetch(where: .matches(\.name, "forei"))
            #expect(found.map(\.icao) == ["XFOR"])
        }
    }

    @Test("after another client's TRUNCATE, rows inserted again match only their new text")
    func truncate() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.v1)
            let schema = try #require(store.configuration.schema)
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            _ = try await PostgresTestServer.rawRows("TRUNCATE \"airports\"", schema: schema)
            #expect(try await airports.count(where: .matches(\.name, "a")) == 0)
            var renamed = TestAirport.sample[0]
            renamed.name = "Zzyzx Strip"
            try await airports.insert([renamed])
            let oldWord = try #require(TextSearch.tokens(of: TestAirport.sample[0].name, .caseInsensitive).first)
            #expect(try await airports.count(where: .matches(\.name, oldWord)) == 0, "old words are gone")
            #expect(try await airports.count(where: .matches(\.name, "zzyzx")) == 1)
            // INSERT … ON CONFLICT by another client keeps the words right too.
            _ = try await PostgresTestServer.rawRows(
                "INSERT INTO \"airports\" (icao, name, country, elevation, lat, lon) VALUES "
                    + "('\(renamed.icao)', 'Quokka Base', 'ZZ', 0, 0, 0) "
                    + "ON CONFLICT (icao) DO UPDATE SET name = excluded.name", schema: schema)
            #expect(try await airports.count(where: .matches(\.name, "zzyzx")) == 0)
            #expect(try await airports.fetch(where: .matches(\.name, "quok")).map(\.icao) == [renamed.icao])
        }
    }

    @Test("renaming a searched column or table keeps the index: writes work and search equals a scan")
    func renames() async throws {
        try await PostgresTestServer.withStore { store in
            let schema = try #require(store.configuration.schema)
            try await store.migrate(Self.v1)
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            try await store.migrate(
                Migrations(
                    Self.v1.steps + [
                        Migration("3", [.renameColumn("name", to: "title", in: "airports")]),
                        Migration("4", [.renameTable("airports", to: "fields")]),
                    ]))
            // Writes by a foreign client, the index under the new names.
            _ = try await PostgresTestServer.rawRows(
                "INSERT INTO \"fields\" (icao, title, country, elevation, lat, lon) VALUES ('XNEW', 'Wombat Park', 'ZZ', 0, 0, 0)",
                schema: schema)
            let index = try await PostgresTestServer.rawRows(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'fields#title#words' AND schemaname = '\(schema)'",
                schema: schema)
            #expect(index.first?.first??.hasSuffix("USING gin (depot_search_vector(title))") == true, "\(index)")
            let found = try await PostgresTestServer.rawRows(
                "SELECT icao FROM fields WHERE depot_search_vector(title) @@ '''wombat'':*'::tsquery", schema: schema)
            #expect(found == [["XNEW"]])
            let leftovers = try await PostgresTestServer.rawRows(
                "SELECT relname FROM pg_class WHERE relname LIKE 'airports#%' "
                    + "AND relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = '\(schema)') "
                    + "UNION ALL SELECT proname FROM pg_proc WHERE proname LIKE 'airports#%' "
                    + "AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = '\(schema)')",
                schema: schema)
            #expect(leftovers.isEmpty, "nothing of the old names is left: \(leftovers)")
        }
    }

    @Test("a table dropped and created again has no stale word table; erase and recreate works after search")
    func dropAndErase() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.v1)
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            let recreated = Migrations(
                Self.v1.steps + [Migration("3", [.dropTable("airports"), .createTable(TestAirport.self)])])
            try await store.migrate(recreated)
            try await airports.insert([TestAirport.sample[0]])
            let stale = await #expect(throws: DepotError.self) {
                try await airports.count(where: .matches(\.name, "a"))
            }
            #expect(stale?.kind == .invalidQuery, "no index: the query says so instead of answering from stale words")
            try await store.migrate(
                Migrations(recreated.steps + [Migration("4", [.createSearchIndex(TestAirport.self, \.name)])]))
            let all = try await airports.fetch()
            let word = try #require(TextSearch.tokens(of: TestAirport.sample[0].name, .caseInsensitive).first)
            #expect(
                try await airports.fetch(where: .matches(\.name, word)).map(\.icao).sorted() == Self.scan(all, word))

            // Erase and recreate on a database that had a search index.
            try await store.open(Self.v1, entities: [TestAirport.self], onSchemaChange: .eraseAndRecreate)
            try await store.eraseDatabase()
            try await store.migrate(Self.v1)
            try await airports.insert(TestAirport.sample)
            #expect(
                try await airports.fetch(where: .matches(\.name, word)).map(\.icao).sorted()
                    == Self.scan(TestAirport.sample, word))
        }
    }

    @Test("migrate rebuilds a word table of a Depot version before the GIN index as the index, dropping its triggers")
    func legacyWordTable() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.v1)
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            let schema = try #require(store.configuration.schema)
            // The form earlier versions made: a word table kept by a row trigger and a TRUNCATE trigger.
            _ = try await PostgresTestServer.rawRows(
                """
                DROP INDEX "airports#name#words";
                CREATE TABLE "airports#name#words" ("word" text COLLATE "C" NOT NULL, "plain" text COLLATE "C" NOT NULL,
                  "key" text NOT NULL, PRIMARY KEY ("word", "key"));
                INSERT INTO "airports#name#words" SELECT DISTINCT w, depot_fold_diacritics(w), icao FROM airports,
                  depot_words(name) AS w ON CONFLICT DO NOTHING;
                CREATE FUNCTION "airports#name#words#index"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                  IF TG_OP = 'TRUNCATE' THEN DELETE FROM "airports#name#words"; RETURN NULL; END IF;
                  DELETE FROM "airports#name#words" WHERE "key" = coalesce(OLD.icao, NEW.icao);
                  IF TG_OP <> 'DELETE' THEN INSERT INTO "airports#name#words" SELECT w, depot_fold_diacritics(w),
                  NEW.icao FROM depot_words(NEW.name) AS w ON CONFLICT DO NOTHING; END IF; RETURN NULL; END $$;
                CREATE TRIGGER "airports#name#words#index" AFTER INSERT OR DELETE OR UPDATE OF name, icao
                  ON airports FOR EACH ROW EXECUTE FUNCTION "airports#name#words#index"();
                CREATE TRIGGER "airports#name#words#truncate" AFTER TRUNCATE ON airports
                  FOR EACH STATEMENT EXECUTE FUNCTION "airports#name#words#index"();
                INSERT INTO airports (icao, name, country, elevation, lat, lon) VALUES ('XOLD', 'Quokka Meadow', 'ZZ', 0, 0, 0)
                """, schema: schema)
            // Until migrate upgrades it, a search says the index is missing rather than reading stale words.
            store.schemaChanged()
            await #expect(throws: DepotError.self) { try await airports.count(where: .matches(\.name, "quok")) }
            try await store.migrate(Self.v1)
            #expect(try await airports.fetch(where: .matches(\.name, "quok")).map(\.icao) == ["XOLD"])
            let all = try await airports.fetch()
            for prefix in ["a", "gard", "int"] {
                #expect(
                    try await airports.fetch(where: .matches(\.name, prefix)).map(\.icao).sorted()
                        == Self.scan(all, prefix))
            }
            let catalog = try await PostgresTestServer.rawRows(
                "SELECT relname || ':' || relkind::text FROM pg_class WHERE relname LIKE 'airports#%' AND relnamespace = "
                    + "(SELECT oid FROM pg_namespace WHERE nspname = '\(schema)') UNION ALL SELECT tgname FROM pg_trigger "
                    + "WHERE tgname LIKE 'airports#%' UNION ALL SELECT proname FROM pg_proc WHERE proname LIKE 'airports#%'",
                schema: schema)
            #expect(catalog == [["airports#name#words:i"]], "only the GIN index is left: \(catalog)")
        }
    }

    @Test(
        "building the index over rows already there reports rows as migration progress, never backwards, ending with all"
    )
    func buildReportsRows() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Migrations([Self.v1.steps[0]]))
            let rows = TestAirport.numbered(3_000)
            try await store.repository(TestAirport.self).insert(rows)
            let reports = Mutex<[MigrationProgress]>([])
            try await store.migrate(Self.v1) { progress in reports.withLock { $0.append(progress) } }
            // CREATE INDEX is one statement: another connection polls how far it has read; a
            // build this small ends before the first poll, so only the last report is certain.
            let read = reports.withLock { $0 }.compactMap(\.rows)
            #expect(read.last == MigrationProgress.Rows(done: 3_000, total: 3_000), "\(read)")
            #expect(read.allSatisfy { $0.total == 3_000 }, "\(read)")
            #expect(zip(read, read.dropFirst()).allSatisfy { $0.done < $1.done }, "never backwards: \(read)")
            #expect(try await store.repository(TestAirport.self).count(where: .matches(\.name, "gard")) > 0)
            // The poll is a statement PostgreSQL runs (the view and its columns), answering no
            // row for a backend that builds nothing.
            let table = TableDescription(name: "airports", entityName: "airports", columns: [], primaryKey: [])
            let build = try #require(PostgresDialect().searchIndexBuildProgress(on: table))
            let poll = build.progress("0").sql.replacingOccurrences(of: "$1", with: "0")
            #expect(try await PostgresTestServer.rawRows(poll).isEmpty)
            // A backend identity that is no pid fails the poll (which stops following), not 0.
            let bad = build.progress("x").sql.replacingOccurrences(of: "$1", with: "'x'")
            await #expect(throws: (any Error).self) { try await PostgresTestServer.rawRows(bad) }
        }
    }

    @Test(
        "a build that fails (a text too large for a tsvector) fails the step, never reports all rows, leaves no index")
    func failedBuildReportsNoEnd() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Migrations([Self.v1.steps[0]]))
            let airports = store.repository(TestAirport.self)
            // 1.2 MB of distinct words: more than a tsvector holds.
            var generator = SplitMix64(state: 5)
            let huge = (0..<120_000).map { _ in
                String((0..<9).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &generator)! })
            }.joined(separator: " ")
            try await airports.insert(
                TestAirport.numbered(2_000) + [TestAirport(icao: "HUGE", name: huge, country: "ZZ")])
            let reports = Mutex<[MigrationProgress]>([])
            let error = await #expect(throws: DepotError.self) {
                try await store.migrate(Self.v1) { progress in reports.withLock { $0.append(progress) } }
            }
            #expect("\(error.map { String(describing: $0) } ?? "")".contains("too large for a search index"))
            let read = reports.withLock { $0 }.compactMap(\.rows)
            #expect(read.allSatisfy { $0.done < $0.total }, "no report of all rows: \(read)")
            await #expect(throws: DepotError.self, "the step wrote nothing: no index to search") {
                try await airports.count(where: .matches(\.name, "gard"))
            }
            #expect(try await airports.count() == 2_001)
        }
    }

    @Test("a search index built by functions of another Depot version is rebuilt when a store sets the schema up again")
    func outdatedIndexRebuilt() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.v1)
            let schema = try #require(store.configuration.schema)
            // An earlier version's functions, say one that held no word of text that is not ASCII.
            _ = try await PostgresTestServer.rawRows(
                """
                CREATE OR REPLACE FUNCTION depot_search_vector_unicode(t text) RETURNS tsvector LANGUAGE sql
                  IMMUTABLE STRICT RETURN ''::tsvector;
                COMMENT ON FUNCTION depot_search_vector_unicode(text) IS 'depot old';
                COMMENT ON INDEX "airports#name#words" IS 'depot search old'
                """, schema: schema)
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            #expect(try await airports.count(where: .matches(\.name, "vigra")) == 0, "the old words hold no 'vigra'")
            // A store opening the schema finds a function of another version, sets it up again, and
            // rebuilds the index those functions filled.
            let again = PostgresStore(configuration: store.configuration)
            #expect(
                try await again.repository(TestAirport.self).fetch(where: .matches(\.name, "vigra")).map(\.icao) == [
                    "ENAL"
                ])
            let all = try await airports.fetch()
            for prefix in ["ål", "pozn", "isaf", "a"] {
                #expect(
                    try await airports.fetch(where: .matches(\.name, prefix)).map(\.icao).sorted()
                        == Self.scan(all, prefix), "\(prefix)")
            }
            let mark = try await PostgresTestServer.rawRows(
                "SELECT obj_description('\"airports#name#words\"'::regclass, 'pg_class')", schema: schema)
            #expect(mark == [[PostgresDialect.searchIndexVersion]])
            await again.close()
        }
    }

    @Test("rows loaded by psql's COPY in another process are searchable: empty, very long words, every plane")
    func copyFromAnotherProcess() async throws {
        try await PostgresTestServer.withStore { store in
            try await store.migrate(Self.v1)
            let schema = try #require(store.configuration.schema)
            let names = [
                "", "Wombat Park", String(repeating: "漢", count: 3000), "𠀋𠀌 Plane Two", "🛫 Emoji Field",
                "Ðe\u{301}ja\u{300} Vu", String(repeating: "x", count: 5000) + " tail",
            ]
            // COPY's text format: tab-separated; none of the names holds a tab, newline or backslash.
            let lines = names.enumerated().map { "C\($0.offset)\t\($0.element)\tZZ\t0\t0\t0" }
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("depot-copy-\(UUID()).tsv")
            defer { try? FileManager.default.removeItem(at: data) }
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: data)
            let url = try PostgresEnvironment.requireURL()
            let copy = "COPY \"\(schema)\".\"airports\" (icao, name, country, elevation, lat, lon) FROM STDIN"
            let run = try await offPool {
                let process = try ChildProcess.run(
                    URL(fileURLWithPath: "/bin/sh"),
                    [
                        "-c",
                        "exec psql \"$DEPOT_COPY_URL\" -v ON_ERROR_STOP=1 -c \"$DEPOT_COPY_SQL\" < \"$DEPOT_COPY_FILE\"",
                    ],
                    environment: ProcessInfo.processInfo.environment.merging(
                        ["DEPOT_COPY_URL": url, "DEPOT_COPY_SQL": copy, "DEPOT_COPY_FILE": data.path]
                    ) { $1 },
                    errors: .output)
                let printed = process.output?.readDataToEndOfFile() ?? Data()
                process.waitUntilExit()
                return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
            }
            #expect(run.0 == 0, "psql COPY: \(run.1)")
            #expect(run.1.contains("COPY \(names.count)"), "\(run.1)")
            let airports = store.repository(TestAirport.self)
            let all = try await airports.fetch()
            #expect(all.map(\.name).sorted() == names.sorted())
            for prefix in ["wom", "漢漢", "𠀋", "🛫", "deja", "xxxx", String(repeating: "x", count: 5000), "tail", "plane"]
            {
                let found = try await airports.fetch(where: .matches(\.name, prefix)).map(\.icao).sorted()
                #expect(found == Self.scan(all, prefix), "matches '\(prefix.prefix(20))'")
            }
        }
    }
}
