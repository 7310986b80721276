import Depot
import Foundation

/// One accepted `PATCH`, kept by the server so that clients can catch up with `GET /changes`.
public struct AirportChange: Entity, Equatable {
    /// The server's revision after this change (1, 2, …; reset by an import).
    public var revision: Int
    /// The airport the change applies to.
    public var icao: String
    /// The members the change carried, as a JSON object (an ``AirportRecord``).
    public var members: String

    /// A change from its parts.
    public init(revision: Int, icao: String, members: String) {
        self.revision = revision
        self.icao = icao
        self.members = members
    }

    /// The `airport_changes` table, keyed by revision.
    public static let schema = Schema<AirportChange>("airport_changes", primaryKey: \.revision) {
        Column(\.revision, "revision")
        Column(\.icao, "icao")
        Column(\.members, "members")
    }
}

/// Which import a server's data comes from: a client that synced another import starts over.
public struct AirportDataset: Entity, Equatable {
    /// Always ``AirportDataset/current``: one row.
    public var id: String
    /// A new random value on every import.
    public var epoch: String
    /// When the import ran.
    public var importedAt: Date

    /// A dataset row; `id` defaults to ``AirportDataset/current``, the one row's key.
    public init(id: String = AirportDataset.current, epoch: String, importedAt: Date) {
        self.id = id
        self.epoch = epoch
        self.importedAt = importedAt
    }

    /// The key of the one row.
    public static let current = "current"

    /// The row for a dataset imported now: a new random epoch.
    public static func fresh() -> AirportDataset {
        AirportDataset(epoch: UUID().uuidString, importedAt: Date())
    }

    /// The `airport_dataset` table: one row, keyed by `id`.
    public static let schema = Schema<AirportDataset>("airport_dataset", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.epoch, "epoch")
        Column(\.importedAt, "imported_at")
    }
}

/// `GET /dataset`: what the server holds.
public struct DatasetInfo: Codable, Sendable, Equatable {
    /// Changes when the server imports again (then incremental syncs start over).
    public var epoch: String
    /// The revision of the newest change (0 before any `PATCH`).
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

/// `GET /changes?since=R`: the changes after revision `R`, oldest first.
public struct ChangesPage: Codable, Sendable, Equatable {
    /// The server's current import; a client that synced another one must sync in full.
    public var epoch: String
    /// The revision to ask from next time (the last change this page looked at).
    public var revision: Int
    /// Whether more changes follow; ask again with `since=revision`.
    public var more: Bool
    /// Partial records: only the members each change carried (merged per airport by the store).
    public var changes: [AirportRecord]
    /// Airports deleted in this page's changes, by icao (with `country=`, every deletion: the
    /// airport's country went with it). A change listed before its airport's deletion is left out.
    /// Absent means none.
    public var deleted: [String]
    /// Whether changes after `since` are gone from the server's change log (it keeps the newest
    /// ``AirportsServer/Limits/changeLogLength``): the client must sync in full. Absent means false.
    public var pruned: Bool

    /// A page from its parts.
    public init(
        epoch: String, revision: Int, more: Bool, changes: [AirportRecord], deleted: [String] = [],
        pruned: Bool = false
    ) {
        self.epoch = epoch
        self.revision = revision
        self.more = more
        self.changes = changes
        self.deleted = deleted
        self.pruned = pruned
    }

    enum CodingKeys: String, CodingKey {
        case epoch, revision, more, changes, deleted, pruned
    }

    /// Decodes a page; a missing `pruned` reads as false and a missing `deleted` as none (servers
    /// before them sent neither).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        epoch = try container.decode(String.self, forKey: .epoch)
        revision = try container.decode(Int.self, forKey: .revision)
        more = try container.decode(Bool.self, forKey: .more)
        changes = try container.decode([AirportRecord].self, forKey: .changes)
        deleted = try container.decodeIfPresent([String].self, forKey: .deleted) ?? []
        pruned = try container.decodeIfPresent(Bool.self, forKey: .pruned) ?? false
    }
}
