import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// Relations enforced by Depot's own reads must hold when two transactions race on PostgreSQL
/// (READ COMMITTED): without row locks, a child added to a parent that another transaction is
/// removing would outlive it.
@Suite(
    "PostgresStore relations under concurrent transactions",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"), .timeLimit(.minutes(10)))
struct PostgresIntegrityRaceTests {
    static let norway = RelCountry(code: "NO", name: "Norway", continent: "EU")
    static let oslo = RelAirport(icao: "ENGM", name: "Oslo", country: "NO")

    /// Two stores on one scratch schema, the country stored; `body` gets both.
    func withTwoStores(_ body: (PostgresStore, PostgresStore) async throws -> Void) async throws {
        try await PostgresTestServer.withStore { first in
            let second = PostgresStore(configuration: first.configuration)
            try await withCleanup {
                try await first.repository(RelCountry.self).insert(Self.norway)
                _ = try await first.repository(RelAirport.self).count()  // both tables exist
                try await body(first, second)
            } cleanup: {
                await second.close()
            }
        }
    }

    @Test("UpdateMapper calls from two stores at once lose no update (rows read FOR NO KEY UPDATE)")
    func noLostUpdates() async throws {
        try await withTwoStores { first, second in
            let (stored, inserted) = try await ConcurrentStoreChecks.concurrentClimbs(first, second)
            #expect(stored == 24, "the stored row got every increment")
            #expect(inserted == 24, "the row inserted by the first caller got every later increment")
        }
    }

    @Test("a country removed while another transaction adds one of its airports takes that airport with it")
    func removalWaitsForTheAddition() async throws {
        try await withTwoStores { first, second in
            let added = Signal()
            let adding = Task {
                try await first.write { tx in
                    try await tx.repository(RelAirport.self).insert(Self.oslo)
                    added.fire()
                    // Still open while the other store removes the country.
                    try await Task.sleep(for: .milliseconds(400))
                }
            }
            try await added.wait()
            // Waits for the addition to commit, then cascades to the new airport.
            #expect(try await second.repository(RelCountry.self).remove("NO"))
            try await adding.value
            #expect(try await second.repository(RelAirport.self).count() == 0, "no airport outlives its country")
            #expect(try await second.repository(RelCountry.self).count() == 0)
        }
    }

    @Test("an airport added while another transaction removes its country is refused, naming the country")
    func additionWaitsForTheRemoval() async throws {
        try await withTwoStores { first, second in
            let removed = Signal()
            let removing = Task {
                try await first.write { tx in
                    #expect(try await tx.repository(RelCountry.self).remove("NO"))
                    removed.fire()
                    try await Task.sleep(for: .milliseconds(400))
                }
            }
            try await removed.wait()
            let error = await #expect(throws: DepotError.self) {
                try await second.repository(RelAirport.self).insert(Self.oslo)
            }
            #expect(error?.kind == .constraintViolation)
            #expect(error?.message.contains("names no RelCountry") == true, "\(error?.message ?? "")")
            try await removing.value
            #expect(try await second.repository(RelAirport.self).count() == 0)
        }
    }
}
