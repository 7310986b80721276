import Depot
import Foundation
import Testing

@Suite("README samples, run")
struct SampleRunTests {
    @Test("partial updates: an absent member is kept, a null one cleared, a member the DTO lacks kept")
    func partialUpdateKeepsAbsentFields() async throws {
        let store = InMemoryStore()
        let contacts = store.repository(Contact.self)
        try await contacts.insert(Contact(id: 7, name: "Grace", email: "g@example.com", isOnline: true))
        try await persistPartialResponse(contacts: contacts)
        #expect(try await contacts.find(7) == Contact(id: 7, name: "Grace", email: "g@example.com", isOnline: nil))
    }

    @Test("relations: includes, predicates across relations, and a cascading remove give what the README says")
    func relationsTourAnswers() async throws {
        let store = InMemoryStore()
        try await store.repository(Country.self).insert([
            Country(code: "NO", name: "Norway", continent: "EU"),
            Country(code: "SE", name: "Sweden", continent: "EU"),
            Country(code: "AQ", name: "Antarctica", continent: "AN"),
            Country(code: "NP", name: "Nepal", continent: "AS"),
        ])
        func airport(_ icao: String, _ country: String, _ elevation: Double) -> Airport {
            Airport(
                icao: icao, iata: nil, name: icao, country: country, elevation: elevation, latitude: 0, longitude: 0)
        }
        try await store.repository(Airport.self).insert([
            airport("ENGM", "NO", 681), airport("ENFL", "NO", 1_100), airport("ENVA", "NO", 56),
            airport("ESSA", "SE", 137), airport("VNLK", "NP", 9_337), airport("VNSB", "NP", 12_400),
        ])

        let (europe, inEurope, empty, high) = try await relationsTour(store: store)
        #expect(europe.map(\.code) == ["NO", "SE"])  // ordered by name: Norway, Sweden
        #expect(try europe.map { try $0[Country.airports].map(\.icao) } == [["ENFL"], []])
        #expect(Set(inEurope.map(\.icao)) == ["ENGM", "ENFL", "ENVA", "ESSA"])
        #expect(empty.map(\.code) == ["AQ"])
        #expect(high == 1)
        // The tour ends by removing Norway: its airports go with it (.cascade).
        #expect(try await store.repository(Country.self).find("NO") == nil)
        #expect(try await store.repository(Airport.self).count(where: \.country == "NO") == 0)
        #expect(try await store.repository(Airport.self).count() == 3)
    }

    @Test("migrations: the README's list takes a version-1 database to the last version, feet to metres")
    func migrationListRuns() async throws {
        let store = InMemoryStore()
        _ = try await store.migrate(migrations, to: 1)
        try await store.repository(AirportV1.self).insert(AirportV1(icao: "ENGM", name: "Oslo", elevation: 681))
        let outcome = try await store.migrate(migrations)
        #expect(outcome.to == 6)
        let airport = try #require(try await store.repository(AirportV5.self).find("ENGM"))
        #expect(airport.title == "Oslo" && airport.country == "ZZ")
        #expect(abs((airport.elevation ?? 0) - 681 * 0.3048) < 1e-9)
        // Step 6 is irreversible: going below it fails and changes nothing.
        await #expect(throws: DepotError.self) { try await store.migrate(migrations, to: 3) }
        #expect(try await store.appliedMigrations().count == 6)
    }
}
