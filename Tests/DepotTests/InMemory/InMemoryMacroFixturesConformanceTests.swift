import Depot
import DepotTestingMacro
import Testing

@Suite("InMemoryStore conformance, @Entity fixtures", .timeLimit(.minutes(10)))
struct InMemoryMacroFixturesConformanceTests {
    @Test("in-memory store passes with fixtures declared by @Entity", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        try await check.run(on: InMemoryStore())
    }

    @Test("the fixtures of this suite are the macro's: generated row initializers, same tables as by hand")
    func fixturesAreMacroDeclared() {
        // Compiles only where @Entity generated `init(depotRow:)`.
        let initializers: [Any] = [
            TestAirport.init(depotRow:), AllTypes.init(depotRow:), Reading.init(depotRow:), TestOrder.init(depotRow:),
            TestUser.init(depotRow:), TestAccount.init(depotRow:), RelAirport.init(depotRow:),
            RelMembership.init(depotRow:),
        ]
        #expect(initializers.count == 8)
        #expect(
            TestAirport.schema.table.columns.map(\.name) == [
                "icao", "iata", "name", "city", "country", "elevation", "lat", "lon",
            ])
        #expect(Reading.schema.table.primaryKey == ["station", "sequence"])
        #expect(
            TestAccount.schema.table.indexes.map(\.name) == [
                "test_accounts_email_key", "test_accounts_country_idx", "test_accounts_team_handle",
            ])
    }
}
