import Depot
import Foundation

/// `GET /dataset`: what the server holds.
public struct DatasetInfo: Codable, Sendable, Equatable {
    /// The sync log's epoch: it changes when the server imports again (synced clients then copy
    /// in full).
    public var epoch: String
    /// The sequence number of the newest logged change (0 before any).
    public var revision: Int
    /// How many airports the server holds.
    public var airports: Int

    /// An answer from its parts.
    public init(epoch: String, revision: Int, airports: Int) {
        self.epoch = epoch
        self.revision = revision
        self.airports = airports
    }
}
