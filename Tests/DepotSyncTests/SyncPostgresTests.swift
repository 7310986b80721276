import AirportsExample
import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Testing

/// The same engine on every store: a PostgreSQL server store, and replicas on PostgreSQL, SQLite
/// and the in-memory store, through the same faults.
@Suite(
    "DepotSync on PostgreSQL", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct SyncPostgresTests {
    @Test("a PostgreSQL server, and PostgreSQL, SQLite and in-memory replicas, converge through the harsh schedule")
    func mixedStoresConverge() async throws {
        let server = try PostgresStore(url: try PostgresEnvironment.scratchURL())
        let replica = try PostgresStore(url: try PostgresEnvironment.scratchURL())
        try await withCleanup {
            var schedule: [SyncConvergenceTests.Step] = []
            for round in 0..<10 {
                for index in 0..<3 {
                    schedule.append(
                        .init(
                            replica: index, action: (round + index) % 8, airport: round % 4, field: (round + index) % 4)
                    )
                }
                schedule.append(.init(replica: 0, action: 9, airport: 0, field: 0))
            }
            let faults = try await SyncConvergenceTests.run(
                replicas: 3, schedule: schedule, seed: 7, airports: Array(try await someAirports(["IS"]).prefix(40)),
                server: server, replicaStores: [replica, try SQLiteStore.temporary(), InMemoryStore()])
            // The run checks convergence itself; here, that the network was as bad as meant.
            #expect(faults["drop", default: 0] + faults["duplicate", default: 0] + faults["503", default: 0] > 0)
        } cleanup: {
            try? await server.dropSchema()
            try? await replica.dropSchema()
            await server.close()
            await replica.close()
        }
    }
}
