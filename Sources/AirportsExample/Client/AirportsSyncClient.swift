import Depot
import DepotHTTP
import DepotSync
import Foundation

extension SyncEngine {
    /// An engine syncing airports between `store` and the airports API `client` talks to, through
    /// its DepotSyncServer routes (`/sync`, or `/sync/country/{code}` for one country's airports).
    ///
    /// ```swift
    /// let engine = SyncEngine.airports(store: store, client: APIClient(baseURL: api))
    /// try await engine.store.repository(Airport.self).update(
    ///     where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo Gardermoen")])
    /// try await engine.sync()
    /// ```
    ///
    /// - Parameters:
    ///   - country: Only this country's airports (pulled, and the only ones a push may touch);
    ///     `nil` for all. A store switched from one to the other copies in full once, removing
    ///     what the new scope lacks.
    public static func airports(
        store: any Store, client: APIClient?, conflicts: ConflictPolicy<Airport> = .lastWriterWins,
        pageSize: Int = 5_000, country: String? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) -> SyncEngine {
        SyncEngine(
            store: store, client: client,
            entities: [
                .entity(
                    Airport.self, server: AirportsSyncPath.path(country: country), pageSize: pageSize,
                    conflicts: conflicts)
            ],
            clock: clock)
    }
}

/// Where the airports' sync routes are.
public enum AirportsSyncPath {
    /// `/sync`, or `/sync/country/{code}`.
    public static func path(country: String?) -> String {
        guard let country else { return "/sync" }
        return "/sync/country/" + (country.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? country)
    }
}
