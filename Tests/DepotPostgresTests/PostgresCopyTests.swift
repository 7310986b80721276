import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// Large batches reach the server as `COPY`; the values they carry are the conformance suite's
/// (`bulkWriteCases`, on every store). Here: which statement the server runs, and what a table's
/// own triggers see.
@Suite(
    "PostgreSQL bulk writes through COPY",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(5)))
struct PostgresCopyTests {
    /// A statement-level trigger on `airports` that logs what the client sent (`current_query()`)
    /// and a row-level one that counts rows, as a foreign writer's triggers would.
    static let statementSpy = """
        CREATE TABLE statements (query text NOT NULL, tag text NOT NULL);
        CREATE FUNCTION log_statement() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO statements VALUES (current_query(), TG_OP); RETURN NULL; END $$;
        CREATE TRIGGER spy_statement AFTER INSERT OR UPDATE ON airports FOR EACH STATEMENT
            EXECUTE FUNCTION log_statement();
        """
    static let spy =
        statementSpy + """
            ;
            CREATE TABLE row_events (icao text NOT NULL);
            CREATE FUNCTION log_row() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO row_events VALUES (NEW.icao); RETURN NULL; END $$;
            CREATE TRIGGER spy_row AFTER INSERT OR UPDATE ON airports FOR EACH ROW EXECUTE FUNCTION log_row();
            """

    /// A store whose `airports` table exists (a row written and removed) and carries `spy`'s
    /// triggers, given to `body` with the table's repository and the store's schema.
    static func withSpiedStore(
        _ spy: String, _ body: (PostgresStore, Repository<TestAirport>, String) async throws -> Void
    ) async throws {
        try await PostgresTestServer.withStore { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(Self.airports(1, from: 0))
            _ = try await airports.removeAll()
            let schema = try #require(store.configuration.schema)
            _ = try await PostgresTestServer.rawRows(spy, schema: schema)
            try await body(store, airports, schema)
        }
    }

    /// What the statement spy logged, in order: the client's statement and the trigger's operation.
    static func loggedStatements(in schema: String) async throws -> [(query: String, tag: String)] {
        try await PostgresTestServer.rawRows("SELECT query, tag FROM statements", schema: schema).map { row in
            (try #require(row[0], "a logged query"), try #require(row[1], "a logged operation"))
        }
    }

    static func airports(_ count: Int, from first: Int, name: String = "Airport") -> [TestAirport] {
        (first..<(first + count)).map {
            TestAirport(icao: "K\($0)", name: "\(name) \($0)\t\\", country: $0 % 2 == 0 ? "US" : "CA")
        }
    }

    @Test(
        "a batch of 500 rows or more reaches the server as COPY (an upsert through a staging table), a smaller one as one INSERT … UNNEST; row triggers fire for every row"
    )
    func largeBatchesAreCopied() async throws {
        try await Self.withSpiedStore(Self.spy) { _, airports, schema in
            try await airports.insert(Self.airports(499, from: 1))
            try await airports.insert(Self.airports(500, from: 1_000))
            #expect(try await airports.upsert(Self.airports(600, from: 1_300, name: "Renamed")) == 600)
            #expect(try await airports.count() == 499 + 500 + 400)

            let queries = try await Self.loggedStatements(in: schema)
            #expect(queries.count == 4, "\(queries)")
            #expect(queries.first?.query.hasPrefix("INSERT INTO \"airports\"") == true, "\(queries)")
            #expect(queries.first?.query.contains("UNNEST") == true)
            #expect(queries.dropFirst().first?.query.hasPrefix("COPY \"airports\"") == true, "\(queries)")
            // The upsert: COPY into the staging table (no trigger there), then one INSERT … ON CONFLICT
            // from it, which fires the insert and the update statement triggers.
            let upsert = queries.dropFirst(2).map(\.query)
            #expect(upsert.allSatisfy { $0.contains("FROM pg_temp.\"depot stage ") }, "\(upsert)")
            #expect(Set(queries.dropFirst(2).map(\.tag)) == ["INSERT", "UPDATE"])
            let events = try await PostgresTestServer.rawRows("SELECT count(*)::text FROM row_events", schema: schema)
            #expect(events.first?.first == "1599", "499 + 500 inserted, 200 updated, 400 inserted")
            #expect(try await airports.find("K1400")?.name == "Renamed 1400\t\\")
            #expect(try await airports.find("K1000")?.name == "Airport 1000\t\\")
        }
    }

    @Test("a batch past 100,000 rows is copied in slices of 100,000, every row written and counted")
    func slices() async throws {
        try await Self.withSpiedStore(Self.statementSpy) { _, airports, schema in
            try await airports.insert(Self.airports(100_500, from: 0))
            #expect(try await airports.upsert(Self.airports(100_200, from: 400, name: "Renamed")) == 100_200)
            let queries = try await Self.loggedStatements(in: schema).map(\.query)
            #expect(queries.filter { $0.hasPrefix("COPY \"airports\"") }.count == 2, "two slices inserted")
            #expect(queries.filter { $0.contains("FROM pg_temp.\"depot stage ") }.count == 4, "two slices upserted")
            #expect(try await airports.count() == 100_600)
            #expect(try await airports.find("K399")?.name == "Airport 399\t\\")
            #expect(try await airports.find("K100499")?.name == "Renamed 100499\t\\")
            #expect(try await airports.find("K100599")?.name == "Renamed 100599\t\\")
        }
    }

    @Test("staged upserts in one transaction reuse one emptied staging table: each writes its own rows only")
    func repeatedStagedUpserts() async throws {
        try await PostgresTestServer.withStore { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(Self.airports(1_000, from: 0))
            let counts = try await store.write { tx in
                let inside = tx.repository(TestAirport.self)
                var counts: [Int] = []
                // Overlapping ranges, each renamed anew: rows a stale stage would re-apply show.
                for round in 0..<12 {
                    counts.append(
                        try await inside.upsert(Self.airports(600, from: round * 50, name: "Round \(round)")))
                }
                return counts
            }
            #expect(counts == Array(repeating: 600, count: 12))
            #expect(try await airports.find("K0")?.name == "Round 0 0\t\\")
            #expect(try await airports.find("K599")?.name == "Round 11 599\t\\")
            #expect(try await airports.find("K1149")?.name == "Round 11 1149\t\\")
            #expect(try await airports.find("K999")?.name == "Round 11 999\t\\")
            #expect(try await airports.count() == 1_150)
        }
    }

    @Test(
        "a role that may not create temporary tables upserts a large batch through arrays instead",
        .enabled(if: PostgresEnvironment.isBouncerConfigured, "makes a database of its own: needs CREATEDB"))
    func withoutTemporaryTables() async throws {
        try await PostgresTestServer.withPooledDatabase { _, direct in
            let database = try #require(URLComponents(string: direct)?.path.dropFirst().description)
            let reader = PostgresEnvironment.readerRole
            _ = try await PostgresTestServer.rawRows(
                "REVOKE TEMPORARY ON DATABASE \(database) FROM PUBLIC; GRANT CREATE ON DATABASE \(database) TO \(reader)",
                url: direct)
            var address = try #require(URLComponents(string: try PostgresEnvironment.requireReaderURL()))
            address.path = "/" + database
            let url = try #require(address.string)
            let allowed = try await PostgresTestServer.rawRows(
                "SELECT has_database_privilege(current_database(), 'TEMPORARY')::text", url: url)
            try #require(allowed.first?.first == "false", "the reader role may not create temporary tables")
            var configuration = try PostgresStore.Configuration(url: url)
            configuration.schema = PostgresEnvironment.scratchSchemaName()
            let store = PostgresStore(configuration: configuration)
            try await withCleanup {
                let airports = store.repository(TestAirport.self)
                try await airports.insert(Self.airports(600, from: 0))
                #expect(try await airports.upsert(Self.airports(700, from: 100, name: "Renamed")) == 700)
                #expect(try await airports.count() == 800)
                #expect(try await airports.find("K650")?.name == "Renamed 650\t\\")
                #expect(try await airports.find("K50")?.name == "Airport 50\t\\")
            } cleanup: {
                await store.close()
            }
        }
    }

    @Test("a COPY that a constraint stops names the table and the row, and leaves the transaction usable")
    func constraintFailure() async throws {
        try await PostgresTestServer.withStore { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(Self.airports(1, from: 700))
            let error = try await store.write { tx -> DepotError? in
                let inside = tx.repository(TestAirport.self)
                do {
                    try await inside.insert(Self.airports(1_000, from: 0))
                    return nil
                } catch let error as DepotError {
                    // The failed batch is undone; the transaction goes on, and commits this.
                    try await inside.insert(Self.airports(600, from: 5_000))
                    return error
                }
            }
            #expect(error?.kind == .constraintViolation)
            #expect(error?.table == "airports")
            #expect(error?.message.contains("K700") == true, "\(String(describing: error))")
            #expect(try await airports.count() == 601)
            #expect(try await airports.find("K1") == nil)
        }
    }

    /// A row trigger that sleeps for an hour on a row named `Stall…`: the server stops reading the
    /// COPY's data, so the client's socket fills and it waits to send more.
    static let stall = """
        CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.name LIKE 'Stall%' THEN PERFORM pg_sleep(3600); END IF; RETURN NEW; END $$;
        CREATE TRIGGER stall BEFORE INSERT ON airports FOR EACH ROW EXECUTE FUNCTION stall()
        """

    @Test(
        "a session ended in the middle of a COPY, while the client waits to send more, fails the write with .connection instead of hanging; nothing is written and the store writes again"
    )
    func sessionEndedMidCopy() async throws {
        try await Self.withSpiedStore(Self.stall) { _, airports, schema in
            // About 60 MB of COPY text: far more than the socket buffers hold.
            let long = String(repeating: "x", count: 1_000)
            let rows = Self.airports(60_000, from: 0, name: "Stall \(long)")
            let write = Task { try await airports.insert(rows) }
            // Ordered by the server's own state: the COPY's session sleeping in the trigger.
            func sleepingCopy() async throws -> String? {
                try await PostgresTestServer.rawRows(
                    "SELECT pid::text FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'COPY%'",
                    schema: schema
                ).first?.first ?? nil
            }
            var found = try await sleepingCopy()
            while found == nil {
                try await Task.sleep(for: .milliseconds(20))
                found = try await sleepingCopy()
            }
            let pid = try #require(found)
            // The client keeps sending until its socket is full, then waits for the server to read.
            try await Task.sleep(for: .milliseconds(300))
            _ = try await PostgresTestServer.rawRows("SELECT pg_terminate_backend(\(pid))", schema: schema)

            let error = await #expect(throws: DepotError.self) { try await write.value }
            #expect(error?.kind == .connection, "\(String(describing: error))")
            #expect(try await airports.count() == 0, "nothing of the batch")
            try await airports.insert(Self.airports(600, from: 0))
            #expect(try await airports.count() == 600)
        }
    }
}
