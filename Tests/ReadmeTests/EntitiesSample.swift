// The README's entity samples, verbatim between the markers (ReadmeSampleTests checks them).
import Depot
import Foundation

// readme:begin
struct WeatherStation: Entity, Equatable {
    var id: String
    var name: String
    var country: String
    var email: String?

    static let schema = Schema<WeatherStation>("weather_stations", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "name")
        Column(\.country, "country")
        Column(\.email, "email")
    }
    .index(\.country)
    .unique(\.email)
}
// readme:end

// readme:begin
/// The members app's next step, proposed from its entities; `migrations` holds its seven steps so far.
func proposeNextStep(store: some MigratableStore, migrations: Migrations) async throws -> Migrations {
    let proposal = try await store.proposeMigration(for: [Member.self, WeatherStation.self])
    print(proposal.swiftSource(name: "\(migrations.latestVersion + 1) members"))
    // Migration("8 members", [
    //     .addColumn("is_online", .bool, nullable: true, to: "members"),
    //     .createTable(WeatherStation.self),
    // ])
    return Migrations(migrations.steps + [proposal.migration(named: "8 members")])  // after review
}

/// Or let the store apply additions itself, and refuse anything else.
func openApplyingAdditions(store: some MigratableStore, migrations: Migrations) async throws {
    try await store.open(migrations, entities: [Member.self], onSchemaChange: .applyAdditiveChanges)
}
// readme:end
