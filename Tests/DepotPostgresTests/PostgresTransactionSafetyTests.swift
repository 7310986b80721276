import Depot
import DepotSQL
import DepotTestSupport
import DepotTesting
import MetricsTestKit
import Testing

@testable import DepotPostgres

@Suite(
    "PostgresStore transactions the server ends",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresTransactionSafetyTests {
    @Test("a transaction the server aborted is not reported as committed: COMMIT answered ROLLBACK throws")
    func abortedTransactionThrows() async throws {
        try await PostgresTestServer.withStore { store in
            let error = await #expect(throws: DepotError.self) {
                try await store.transaction { writer in
                    try await writer.write(
                        RowBatch(
                            columns: ["station", "sequence", "value"], values: [.text("lost"), .integer(1), .null]),
                        into: Reading.schema.table, mode: .insert)
                    let sql = try #require(writer as? SQLWriter<PostgresEngine>)
                    // A statement fails and its error is swallowed: the server has aborted the
                    // transaction, and answers the COMMIT with ROLLBACK, without an error.
                    _ = try? await sql.execute(SQLStatement(sql: "SELECT 1 / 0"))
                }
            }
            #expect(error?.kind == .transaction)
            #expect(error?.message.contains("did not commit") == true, "\(error?.message ?? "")")
            let stored = try await store.repository(Reading.self).count()
            #expect(stored == 0)
        }
    }

    @Test("a savepoint that cannot be rolled back fails the transaction loudly, and nothing commits")
    func unrollableSavepoint() async throws {
        try await PostgresTestServer.withStore { store in
            let error = try await SQLTransactionChecks.unrollableSavepointBreaksTheTransaction(store)
            #expect(error?.kind == .transaction)
        }
    }

    @Test("a store-level call is its own transaction: no savepoint, and a failure keeps none of its rows")
    func wholeCallsNeedNoSavepoint() async throws {
        let (logger, log) = CapturingLogHandler.logger(level: .trace)
        try await PostgresTestServer.withStore(logging: SQLLogging(logger: logger, slowStatementThreshold: nil)) {
            store in
            try await SQLTransactionChecks.wholeCallsNeedNoSavepoint(store, log: log)
        }
    }
}

@Suite(
    "PostgresStore logging",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresLoggingTests {
    @Test("PostgresStore logs", arguments: SQLLoggingChecks.behaviours)
    func logs(behaviour: String) async throws {
        try await SQLLoggingChecks.check(behaviour) { logging, body in
            try await PostgresTestServer.withStore(logging: logging, body)
        }
    }
}

@Suite(
    "PostgresStore metrics",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresMetricsTests {
    @Test("PostgresStore reports", arguments: SQLMetricsChecks.behaviours)
    func reports(behaviour: String) async throws {
        try await SQLMetricsChecks.check(behaviour, system: "postgresql") { metrics, body in
            try await PostgresTestServer.withStore(metrics: metrics, body)
        }
    }

    @Test("the pool reports the connections lent out and how long calls waited for one")
    func pool() async throws {
        let metrics = TestMetrics()
        let dimensions = [("system", "postgresql"), ("db", "pool")]
        try await PostgresTestServer.withStore(metrics: SQLMetrics(factory: metrics, dimensions: [("db", "pool")])) {
            store in
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            _ = try await store.repository(TestAirport.self).fetch(where: \.country == "NO")
            let inUse = try metrics.expectGauge("depot_pool_connections_in_use", dimensions)
            #expect(inUse.values.contains(1), "\(inUse.values)")
            #expect(inUse.lastValue == 0, "every connection came back")
            #expect(try metrics.expectTimer("depot_pool_wait_seconds", dimensions).values.count >= 2)
        }
    }
}

@Suite(
    "PostgresStore tracing",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresTracingTests {
    @Test("a transaction is a span under the caller's, its statements under it; a read's statement under the caller's")
    func spans() async throws {
        try await SQLTracingChecks.spanTree(system: "postgresql") { tracing, body in
            try await PostgresTestServer.withStore(tracing: tracing, body)
        }
    }
}
