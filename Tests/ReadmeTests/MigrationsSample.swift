// The README's migration samples, verbatim between the markers (ReadmeSampleTests checks it);
// MigrationsSampleTests runs the list on the in-memory store. The step test below is the
// README's own, run as written.
import Depot
import DepotSQLite
import DepotTesting
import Foundation
import Testing

// readme:begin
@Entity("airports")
struct AirportV1: Equatable {  // the table as step 1 creates it
    @PrimaryKey var icao: String
    var name: String
    var elevation: Int  // feet
}

@Entity("airports")
struct AirportV2: Equatable {  // after step 2: a country code
    @PrimaryKey var icao: String
    var name: String
    var elevation: Int
    var country: String
}

@Entity("airports")
struct AirportV5: Equatable {  // after step 5: name renamed to title, elevation optional
    @PrimaryKey var icao: String
    var title: String
    var elevation: Double?
    var country: String
}
// readme:end

// readme:begin
let migrations = Migrations([
    Migration("1 airports", [.createTable(AirportV1.self)]),  // from the entity's schema
    Migration("2 country", [.addColumn("country", .text, to: "airports", default: .text("ZZ"))]),
    Migration("3 country index", [.createIndex("airports_country", on: "airports", columns: ["country"])]),
    Migration("4 rename", [.renameColumn("name", to: "title", in: "airports")]),
    Migration(
        "5 elevation", [.alterColumn("elevation", to: .double, nullable: true, in: "airports")],
        down: .operations([.alterColumn("elevation", to: .integer, nullable: false, in: "airports")])),
    Migration(
        "6 feet",
        [
            .data("feet to metres") { tx in
                let airports = tx.repository(AirportV5.self)  // read and write through repositories
                for try await batch in airports.batches(of: 1_000) {  // one batch in memory at a time
                    try await airports.upsert(
                        batch.map { airport in
                            var metres = airport
                            metres.elevation = airport.elevation.map { $0 * 0.3048 }
                            return metres
                        })
                }
            }
        ], down: .irreversible),
])
// readme:end

// readme:begin
func migrateTheAppDatabase(path: String) async throws {
    let store = try SQLiteStore(path: path)  // or PostgresStore(url: …)
    try await store.migrate(migrations, to: 5)  // the steps this database lacks, up to version 5
    try await store.migrate(migrations, to: 3)  // down: steps reverted last first
    try await store.migrate(migrations) { print("\($0.done)/\($0.total) \($0.step)") }  // the rest, with progress
}
// readme:end

// readme:begin
@Test func step2GivesOldAirportsACountry() async throws {
    let store = InMemoryStore()  // or try SQLiteStore.temporary(), or a PostgresStore
    try await MigrationHarness.step(migrations, to: 2, on: store) { tx in
        try await tx.repository(AirportV1.self).insert(AirportV1(icao: "ENGM", name: "Oslo", elevation: 681))
    }
    #expect(try await store.repository(AirportV2.self).find("ENGM")?.country == "ZZ")
}
// readme:end

@Test("the app database sample migrates a real file up to 5, down to 3, then the rest")
func appDatabaseSampleRuns() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-readme-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("app.sqlite").path
    try await migrateTheAppDatabase(path: path)
    let store = try SQLiteStore(path: path)
    #expect(try await store.appliedMigrations().map(\.name) == migrations.steps.map(\.name))
}
