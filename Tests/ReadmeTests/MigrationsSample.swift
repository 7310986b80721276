// The README's migration samples, verbatim between the markers (ReadmeSampleTests checks it);
// MigrationsSampleTests runs the list on the in-memory store. The step test below is the
// README's own, run as written.
import Depot
import DepotSQLite
import DepotTesting
import Testing

/// After step 2: a country code.
struct AirportV2: Entity, Equatable {
    var icao: String
    var name: String
    var elevation: Int
    var country: String
    static let schema = Schema<AirportV2>("airports", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.name, "name")
        Column(\.elevation, "elevation")
        Column(\.country, "country")
    }
}

// readme:begin
@Entity("airports")
struct AirportV1: Equatable {  // the table as step 1 creates it
    @PrimaryKey var icao: String
    var name: String
    var elevation: Int  // feet
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

func migrateTheAppDatabase() async throws {
    // readme:begin
    let store = try SQLiteStore(path: "app.sqlite")  // or PostgresStore(url: …)
    try await store.migrate(migrations)  // the steps this database lacks, in order
    try await store.migrate(migrations, to: 3)  // down: steps reverted last first
    try await store.migrate(migrations) { print("\($0.done)/\($0.total) \($0.step)") }  // progress
    // readme:end
}

// readme:begin
@Test func step2GivesOldAirportsACountry() async throws {
    let store = InMemoryStore()  // or try SQLiteStore.temporary(), or a PostgresStore
    try await MigrationHarness.step(migrations, to: 2, on: store) { tx in
        try await tx.repository(AirportV1.self).insert(AirportV1(icao: "ENGM", name: "Oslo", elevation: 681))
    }
    #expect(try await store.repository(AirportV2.self).find("ENGM")?.country == "ZZ")
}
// readme:end
