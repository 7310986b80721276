import Depot
import DepotPostgres
import DepotSQL
import DepotTestSupport
import DepotTesting
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use: `DEPOT_POSTGRES_URL`, as `.ci/postgres start` prints.
///
/// Without it the PostgreSQL tests skip, and say so; under `CI=true` a missing server fails them.
enum PostgresTestServer {
    /// A fresh store on a new, empty schema of the test database, given to `body`; the schema is
    /// dropped afterwards, whatever happens.
    static func withStore(
        logging: SQLLogging = .standard(label: "depot.postgres"), metrics: SQLMetrics? = nil,
        tracing: SQLTracing? = nil, _ body: (PostgresStore) async throws -> Void
    ) async throws {
        var configuration = try PostgresStore.Configuration(url: try PostgresEnvironment.requireURL())
        configuration.schema = PostgresEnvironment.scratchSchemaName()
        configuration.logging = logging
        configuration.metrics = metrics
        configuration.tracing = tracing
        configuration.maximumConnections = 4
        let store = PostgresStore(configuration: configuration)
        let schema = configuration.schema ?? ""
        // The cleanup is bounded, so that a hang (seen once in CI: a conformance case on PostgreSQL
        // that never returned, not even when its time limit cancelled it) fails this test, naming
        // the step, instead of holding the whole run until CI's own limit.
        try await withCleanup {
            try await body(store)
        } cleanup: {
            do {
                try await Deadline.run("dropping schema \(schema)", limit: .seconds(120)) {
                    try? await store.dropSchema()
                }
                try await Deadline.run("closing the store of schema \(schema)", limit: .seconds(120)) {
                    await store.close()
                }
            } catch {
                Issue.record(error)
            }
        }
    }
}

extension PostgresTestServer {
    /// A fresh store with a pool of one connection (on a new schema, dropped afterwards), given to
    /// `body`: what shows whether a call holds a connection it should not.
    static func withSingleConnectionStore(_ body: (PostgresStore) async throws -> Void) async throws {
        try await withStore { store in
            var configuration = store.configuration
            configuration.maximumConnections = 1
            let single = PostgresStore(configuration: configuration)
            try await withCleanup {
                try await body(single)
            } cleanup: {
                await single.close()
            }
        }
    }

    /// Lets the login-only reader role (`DEPOT_POSTGRES_READER_URL`) read every table of `schema`.
    static func grantReader(on schema: String) async throws {
        let role = PostgresEnvironment.readerRole
        _ = try await rawRows(
            "GRANT USAGE ON SCHEMA \"\(schema)\" TO \(role); GRANT SELECT ON ALL TABLES IN SCHEMA \"\(schema)\" TO \(role)"
        )
    }

    /// A store on `schema` that logs in as the reader role; the caller closes it.
    static func readerStore(schema: String) throws -> PostgresStore {
        var configuration = try PostgresStore.Configuration(url: try PostgresEnvironment.requireReaderURL())
        configuration.schema = schema
        return PostgresStore(configuration: configuration)
    }

    /// The names of `table`'s columns in `schema`, in their order.
    static func columnNames(of table: String, in schema: String) async throws -> [String] {
        try await rawRows(
            "SELECT column_name::text FROM information_schema.columns WHERE table_schema = '\(schema)' "
                + "AND table_name = '\(table)' ORDER BY ordinal_position"
        ).compactMap { $0[0] }
    }

    /// Runs the statements of `sql` on its own connection (outside any store) in `schema`, one after
    /// another, on the test server or the one `url` names; the last one's rows, every cell as text.
    static func rawRows(_ sql: String, schema: String? = nil, url: String? = nil) async throws -> [[String?]] {
        let configuration = try PostgresStore.Configuration(url: try url ?? PostgresEnvironment.requireURL())
        let connection = try await PostgresConnection.connect(
            on: PostgresClient.defaultEventLoopGroup.next(),
            configuration: PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "depot.tests")
        ).get()
        do {
            if let schema {
                _ = try await connection.query(
                    PostgresQuery(unsafeSQL: "SET search_path TO \"\(schema)\""), logger: Logger(label: "depot.tests")
                ).collect()
            }
            // One statement at a time (the extended protocol runs one), in order, on one session.
            var result: [[String?]] = []
            for statement in SQLScript.statements(sql) {
                result = []
                for try await row in try await connection.query(
                    PostgresQuery(unsafeSQL: statement), logger: Logger(label: "depot.tests"))
                {
                    result.append(row.map { cell in cell.bytes.map { String(buffer: $0) } })
                }
            }
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

extension PostgresTestServer {
    /// A fresh store behind the CI's PgBouncer in transaction mode (`.ci/postgres bouncer`), its
    /// listener on the server itself (`listenerURL`), given to `body`.
    ///
    /// Each call gets a database of its own, made for it and dropped afterwards: a schema cannot
    /// keep cases apart behind this pooler, which drops the `search_path` start-up parameter.
    static func withPooledStore(_ body: (PostgresStore) async throws -> Void) async throws {
        try await withPooledDatabase { pooled, direct in
            var configuration = try PostgresStore.Configuration(url: pooled)
            configuration.listenerURL = direct
            configuration.maximumConnections = 4
            let store = PostgresStore(configuration: configuration)
            try await withCleanup {
                try await body(store)
            } cleanup: {
                do {
                    try await Deadline.run("closing the pooled store", limit: .seconds(120)) { await store.close() }
                } catch {
                    Issue.record(error)
                }
            }
        }
    }

    /// A new database, reached through the CI's PgBouncer and directly, given to `body` as those
    /// two URLs; dropped afterwards.
    static func withPooledDatabase(_ body: (_ pooled: String, _ direct: String) async throws -> Void) async throws {
        let (pooled, direct) = try PostgresEnvironment.requireBouncer()
        let database = PostgresEnvironment.scratchSchemaName()
        _ = try await rawRows("CREATE DATABASE \(database)")
        try await withCleanup {
            try await body(try url(pooled, database: database), try url(direct, database: database))
        } cleanup: {
            do {
                try await Deadline.run("dropping database \(database)", limit: .seconds(120)) {
                    _ = try? await rawRows("DROP DATABASE \(database) WITH (FORCE)")
                }
            } catch {
                Issue.record(error)
            }
        }
    }

    /// `url` naming `database` instead of its own, with a 60-second connect timeout.
    private static func url(_ url: String, database: String) throws -> String {
        var components = try #require(URLComponents(string: url))
        components.path = "/" + database
        components.queryItems = [URLQueryItem(name: "connect_timeout", value: "60")]
        return try #require(components.string)
    }
}
