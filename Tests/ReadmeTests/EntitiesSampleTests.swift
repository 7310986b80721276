import Depot
import DepotSQLite
import Foundation
import Testing

@Suite("README entity and proposal samples")
struct EntitiesSampleTests {
    @Test("the proposal sample's comment is what a store of seven steps without is_online gets")
    func proposalAsShown() async throws {
        let store = try SQLiteStore.temporary()
        let steps =
            (1...6).map { Migration("\($0) nothing", []) } + [
                Migration(
                    "7 members",
                    [
                        .createTable(Member.self), .dropColumn("is_online", from: "members"),
                    ])
            ]
        let migrations = Migrations(steps)
        try await store.migrate(migrations)
        let proposal = try await store.proposeMigration(for: [Member.self, WeatherStation.self])
        #expect(
            proposal.swiftSource(name: "8 members") == """
                Migration("8 members", [
                    .addColumn("is_online", .bool, nullable: true, to: "members"),
                    .createTable(WeatherStation.self),
                ])
                """)
        let next = try await proposeNextStep(store: store, migrations: migrations)
        #expect(next.latestVersion == 8)
        #expect(next.steps.last?.name == "8 members")
        try await openApplyingAdditions(store: store, migrations: migrations)
        try await store.checkSchema(of: [Member.self])
        #expect(try await store.appliedMigrations().last?.name == "auto: add members.is_online")
        let stations = store.repository(WeatherStation.self)
        try await stations.insert(WeatherStation(id: "a", name: "A", country: "NO", email: "x@example.com"))
        await #expect(throws: DepotError.self, "email is unique") {
            try await stations.insert(WeatherStation(id: "b", name: "B", country: "NO", email: "x@example.com"))
        }
    }
}
