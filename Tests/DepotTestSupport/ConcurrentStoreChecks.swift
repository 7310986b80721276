import Depot
import DepotTesting

/// Checks of two stores (two processes, in effect) writing one database at once: what a single
/// store's own write lock cannot show. Run by the SQLite and PostgreSQL test targets.
public enum ConcurrentStoreChecks {
    /// `persist` with an ``UpdateMapper`` (add 1) from two stores at once, 12 calls each, on a
    /// stored row (`OLD1`, from 0) and on a key neither had stored when they started (`NEW1`);
    /// returns the two elevations it ends with — 24 each when no update was lost.
    public static func concurrentClimbs(_ first: any Store, _ second: any Store) async throws
        -> (stored: Double?, inserted: Double?)
    {
        try await first.repository(TestAirport.self).insert(
            TestAirport(icao: "OLD1", name: "climb", country: "ZZ", elevation: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for call in 0..<24 {
                let store = call % 2 == 0 ? first : second
                group.addTask {
                    try await store.repository(TestAirport.self).persist(["OLD1", "NEW1"], mapper: ClimbMapper())
                }
            }
            try await group.waitForAll()
        }
        let airports = first.repository(TestAirport.self)
        return (try await airports.find("OLD1")?.elevation, try await airports.find("NEW1")?.elevation)
    }
}
