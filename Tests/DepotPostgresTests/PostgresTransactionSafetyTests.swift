import Depot
import DepotSQL
import DepotTestSupport
import DepotTesting
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
