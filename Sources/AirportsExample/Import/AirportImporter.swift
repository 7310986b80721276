import Depot
import DepotSyncServer
import Foundation

/// Imports the airports CSV into a store: parse everything first, then one transaction that
/// also starts the sync log over (a new epoch: synced clients copy in full).
public enum AirportImporter {
    /// The outcome of an import.
    public struct Summary: Sendable {
        /// How many airports were imported.
        public var rows: Int
        /// Seconds spent reading and parsing the CSV.
        public var parseSeconds: Double
        /// Seconds spent in the store's write transaction.
        public var storeSeconds: Double
    }

    /// Reads `csv` and replaces the store's airports with its rows, in one transaction: a bad
    /// line (named with its line number) writes nothing.
    ///
    /// - Parameter progress: Called as lines are parsed ("parsing", rows) and as airports are
    ///   written inside the transaction ("storing", airports), each phase ending with a complete
    ///   ``WorkProgress``.
    public static func run(
        csv: URL, into store: some Store, progress: (@Sendable (WorkProgress) -> Void)? = nil
    ) async throws -> Summary {
        let clock = ContinuousClock()
        let started = clock.now
        let text: String
        do {
            text = try String(contentsOf: csv, encoding: .utf8)
        } catch {
            throw AirportsCSV.Problem(
                file: csv.path, line: 0, reason: "cannot read the file (\(error.localizedDescription))")
        }
        let airports = try await AirportsCSV.parseOffThePool(text, file: csv.lastPathComponent) { done, total in
            progress?(WorkProgress(phase: "parsing", done: done, total: total, unit: "rows"))
        }
        let parsed = clock.now
        try await store.write { tx in
            // What `replace(where: .all, with:)` does (kept keys are updated in place, the rest go),
            // in chunks with progress between them; one transaction all the same.
            let rows = tx.repository(Airport.self)
            try await WorkProgress.chunked(airports, phase: "storing", unit: "airports", progress: progress) {
                try await rows.upsert($0)
            }
            _ = try await rows.remove(where: !.in(\.icao, airports.map(\.icao)))
            // A new dataset: the sync log starts over (a new epoch) and synced clients copy
            // everything again; the push keys and field times of the old one go with it (a
            // replayed key is then a new push, checked against the new rows, not told "applied").
            try await SyncServer<AirportsCaller>.resetLog(in: tx)
        }
        let stored = clock.now
        return Summary(
            rows: airports.count, parseSeconds: (parsed - started).seconds, storeSeconds: (stored - parsed).seconds)
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
