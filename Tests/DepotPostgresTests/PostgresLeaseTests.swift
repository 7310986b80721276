import Depot
import DepotTestSupport
import DepotTesting
import PostgresNIO
import Testing

@testable import DepotPostgres

@Suite(
    "PostgreSQL calls on a connection that closed under them",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(5)))
struct PostgresLeaseTests {
    /// Runs `body` on a pooled connection of `store` once the connection is closed for good (its
    /// handlers gone), the moment a statement can come too late for PostgresNIO to answer it.
    static func onClosedConnection(
        _ store: PostgresStore, abandonable: Bool,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Void
    ) async throws {
        try await PostgresEngine.leased(
            client: store.engine.client, address: "test", timeout: .seconds(30), pool: nil, abandonable: abandonable
        ) { connection in
            try await connection.close()
            while !connection.isClosed { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(100))  // past the loop turn that removes the handlers
            try await body(connection)
        }
    }

    @Test(
        "a read whose statement went out after its connection closed fails with .connection (PostgresNIO never answers it), and the store reads again"
    )
    func readOnClosedConnection() async throws {
        // With `abandonable: false` this waits forever (PostgresNIO 1.33.2 drops the statement:
        // tried, and stopped after 60 s); a transaction's body, which borrows its caller's
        // closure, cannot be left behind this way.
        try await PostgresTestServer.withStore { store in
            let late: @Sendable (PostgresConnection) async throws -> Void = { connection in
                _ = try await connection.query("SELECT 1", logger: PostgresOperations.logger)
            }
            let failure = await #expect(throws: DepotError.self) {
                try await Self.onClosedConnection(store, abandonable: true, late)
            }
            #expect(failure?.kind == .connection, "\(String(describing: failure))")
            let count = try await store.repository(TestAirport.self).count()
            #expect(count == 0, "the next read works")
        }
    }
}
