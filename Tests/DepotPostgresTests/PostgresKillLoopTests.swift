import DepotPostgres
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// The kill loop on PostgreSQL: `depot-kill-probe` killed with SIGKILL at random moments inside
/// writes and migration steps (the server ends the killed session's transaction); each time a
/// fresh process reconnects and checks the schema.
@Suite(
    "PostgreSQL kill loop", .serialized, .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)),
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"))
struct PostgresKillLoopTests {
    @Test(
        "a PostgreSQL client killed at random moments leaves every transaction wholly or not at all",
        arguments: KillLoop.scenarios)
    func killLoop(_ scenario: String) async throws {
        try await HeavyHarness.run {
            let base = try PostgresEnvironment.requireURL()
            let separator = base.contains("?") ? "&" : "?"
            let migration = scenario.hasPrefix("migrate")
            let shared = PostgresEnvironment.scratchSchemaName()
            let schemas = Mutex<Set<String>>([])
            try await withCleanup { () async throws in
                let report = try await KillLoop.run(scenario) { _ in
                    // A migration scenario starts each kill on a new schema; writes go on in one.
                    let schema = migration ? PostgresEnvironment.scratchSchemaName() : shared
                    schemas.withLock { _ = $0.insert(schema) }
                    return ["--postgres", base + separator + "schema=" + schema]
                }
                print("PostgreSQL kill loop, \(report)")
                #expect(report.kills == KillLoop.kills)
            } cleanup: {
                for schema in schemas.withLock({ $0 }) {
                    guard let store = try? PostgresStore(url: base + separator + "schema=" + schema) else { continue }
                    try? await store.dropSchema()
                    await store.close()
                }
            }
        }
    }
}
