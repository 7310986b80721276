import Depot
import DepotHTTP
import DepotPostgres
import DepotSQL
import DepotSQLite
import DepotSync
import DepotSyncHummingbird
import DepotSyncServer
import DepotTestSupport
import Foundation
import Hummingbird
import Testing

// Axes crossed here (see ATTACK.md): the server's store (in-memory, SQLite, PostgreSQL) ×
// every column type, optional and not, at its extremes × who writes (the app through the
// server's store, a client's push, several at once) × the client's view (another replica of
// the same user, another user).

/// A value of a JSON column.
struct Shelf: Codable, Hashable, Sendable, StorableAsJSON {
    var boards: Int
    var label: String
}

/// One column of every type, optional and not.
struct EveryType: Entity, Equatable {
    var id: UUID
    var owner: String
    var flag: Bool
    var count: Int
    var ratio: Double
    var price: Decimal
    var text: String
    var link: URL
    var shelf: Shelf
    var bytes: Data
    var at: Date
    var maybeFlag: Bool?
    var maybeCount: Int?
    var maybeRatio: Double?
    var maybePrice: Decimal?
    var maybeText: String?
    var maybeLink: URL?
    var maybeShelf: Shelf?
    var maybeBytes: Data?
    var maybeAt: Date?
    var maybeID: UUID?

    static let schema = Schema<EveryType>("every_type", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.owner, "owner")
        Column(\.flag, "flag")
        Column(\.count, "count")
        Column(\.ratio, "ratio")
        Column(\.price, "price")
        Column(\.text, "text")
        Column(\.link, "link")
        Column(\.shelf, "shelf")
        Column(\.bytes, "bytes")
        Column(\.at, "at")
        Column(\.maybeFlag, "maybe_flag")
        Column(\.maybeCount, "maybe_count")
        Column(\.maybeRatio, "maybe_ratio")
        Column(\.maybePrice, "maybe_price")
        Column(\.maybeText, "maybe_text")
        Column(\.maybeLink, "maybe_link")
        Column(\.maybeShelf, "maybe_shelf")
        Column(\.maybeBytes, "maybe_bytes")
        Column(\.maybeAt, "maybe_at")
        Column(\.maybeID, "maybe_id")
    }

    /// Row `index` of a series that walks each type's extremes.
    /// PostgreSQL's text holds no NUL character (Depot refuses it there): `withNUL` false leaves it out.
    static func extreme(_ index: Int, owner: String, withNUL: Bool = true) throws -> EveryType {
        let integers: [Int] = [.min, .max, 0, -1, 1 << 53 + 1]
        let doubles: [Double] = [0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1]
        let decimals: [Decimal] = [
            try #require(Decimal(string: "0.10")), try #require(Decimal(string: "-12345678901234567890.123456789")), 0,
        ]
        let texts = [
            "", withNUL ? "nul\u{0}inside" : "no nul", "e" + String(repeating: "\u{301}", count: 30),
            "𝄞 ☕️ 中文 \u{10FFFF}",
            String(repeating: "long ", count: 700),
        ]
        let dates = [
            Date(microseconds: 0), Date(microseconds: -1), Date(microseconds: -2_000_000_000_000_001),
            Date(microseconds: 1_000_000_000_123_457),
        ]
        let pick = { (count: Int) in index % count }
        let nothing = index % 2 == 0
        return EveryType(
            id: try #require(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", index))), owner: owner,
            flag: index % 3 == 0, count: integers[pick(integers.count)], ratio: doubles[pick(doubles.count)],
            price: decimals[pick(decimals.count)], text: texts[pick(texts.count)],
            link: try #require(URL(string: index % 2 == 0 ? "https://example.com/a?b=c#d" : "file:///tmp/x%20y")),
            shelf: Shelf(boards: index, label: texts[pick(texts.count)]),
            bytes: Data((0..<(index % 4 * 40)).map { UInt8($0 % 256) }),
            at: dates[pick(dates.count)], maybeFlag: nothing ? nil : true, maybeCount: nothing ? nil : -index,
            maybeRatio: nothing ? nil : -0.5, maybePrice: nothing ? nil : Decimal(index),
            maybeText: nothing ? nil : "", maybeLink: nothing ? nil : URL(string: "https://depot.example/\(index)"),
            maybeShelf: nothing ? nil : Shelf(boards: 0, label: ""), maybeBytes: nothing ? nil : Data(),
            maybeAt: nothing ? nil : dates[pick(dates.count)], maybeID: nothing ? nil : UUID())
    }
}

/// The server stores the tests run on: in-memory and SQLite always, PostgreSQL when configured
/// (and required under CI).
enum ServerStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite, postgres

    var testDescription: String { rawValue }

    static var available: [ServerStoreKind] {
        PostgresEnvironment.isConfigured ? allCases : [.memory, .sqlite]
    }

    /// A fresh store of this kind, and how to drop it.
    func make() throws -> (any Store, @Sendable () async -> Void) {
        switch self {
        case .memory:
            return (InMemoryStore(), {})
        case .sqlite:
            return (try SQLiteStore.temporary(), {})
        case .postgres:
            let store = try PostgresStore(url: try PostgresEnvironment.scratchURL())
            return (
                store,
                {
                    try? await store.dropSchema()
                    await store.close()
                }
            )
        }
    }
}

/// A sync server of `EveryType` rows (each user their own) on a store of `kind`, served on
/// 127.0.0.1 under `/sync`.
func withEveryTypeServer(
    _ kind: ServerStoreKind, _ body: (SyncServer<NoteUser>, URL) async throws -> Void
) async throws {
    let (store, drop) = try kind.make()
    try await withCleanup {
        let sync = try await SyncServer<NoteUser>.open(
            store: store,
            tables: [
                .table(
                    EveryType.self, scope: { user in \.owner == user.id },
                    authorize: { @Sendable write, user in write.row.owner == user.id })
            ])
        try await serving(sync) { url in try await body(sync, url) }
    } cleanup: {
        await drop()
    }
}

/// A replica syncing `EveryType` for `user`.
func everyTypeReplica(_ user: String, url: URL, conflicts: ConflictPolicy<EveryType> = .serverWins) throws
    -> SyncEngine
{
    var configuration = APIClient.Configuration.patient
    configuration.headers["Authorization"] = "Bearer \(user)"
    return SyncEngine(
        store: try SQLiteStore.temporary(), client: APIClient(baseURL: url, configuration: configuration),
        entities: [.entity(EveryType.self, server: "/sync", pageSize: 4, conflicts: conflicts)])
}

@Suite("DepotSyncServer on every store", .timeLimit(.minutes(10)))
struct SyncServerStoreTests {
    @Test(
        "every column type, at its extremes, goes server → client → server → another client unchanged",
        arguments: ServerStoreKind.available)
    func everyTypeRoundTrips(_ kind: ServerStoreKind) async throws {
        try await withEveryTypeServer(kind) { sync, url in
            let rows = try (0..<12).map {
                try EveryType.extreme($0, owner: $0 % 3 == 0 ? "bob" : "alice", withNUL: kind != .postgres)
            }
            try await sync.store.repository(EveryType.self).insert(rows)
            let laptop = try everyTypeReplica("alice", url: url)
            try await laptop.sync()
            let mine = rows.filter { $0.owner == "alice" }.sorted { $0.id.uuidString < $1.id.uuidString }
            let local = try await laptop.base.repository(EveryType.self).fetch(orderBy: [.ascending(\.id)])
            #expect(local == mine)
            // The client changes every column of one row, creates one and deletes one.
            var changed = try EveryType.extreme(100 + 1, owner: "alice", withNUL: kind != .postgres)
            changed.id = mine[0].id
            let created = try EveryType.extreme(200 + 4, owner: "alice", withNUL: kind != .postgres)
            let edits = laptop.store.repository(EveryType.self)
            try await edits.upsert(changed)
            try await edits.insert(created)
            _ = try await edits.remove(mine[1].id)
            let report = try await laptop.sync()
            let rejected = try await laptop.rejectedChanges()
            #expect(report.pushed == 3 && report.rejected == 0, "\(report) \(rejected)")
            let server = try await sync.base.repository(EveryType.self).fetch(
                where: \.owner == "alice", orderBy: [.ascending(\.id)])
            let expected = (mine.filter { $0.id != mine[1].id && $0.id != mine[0].id } + [changed, created]).sorted {
                $0.id.uuidString < $1.id.uuidString
            }
            #expect(server == expected)
            let phone = try everyTypeReplica("alice", url: url)
            try await phone.sync()
            #expect(try await phone.base.repository(EveryType.self).fetch(orderBy: [.ascending(\.id)]) == expected)
            let bob = try everyTypeReplica("bob", url: url)
            try await bob.sync()
            #expect(try await bob.base.repository(EveryType.self).fetch().allSatisfy { $0.owner == "bob" })
        }
    }

    @Test(
        "concurrent pushes and app writes while clients pull: every client ends equal to the server",
        arguments: ServerStoreKind.available)
    func concurrentWritersNeverSkipAChange(_ kind: ServerStoreKind) async throws {
        try await withEveryTypeServer(kind) { sync, url in
            let seed = try (0..<8).map { try EveryType.extreme($0, owner: "alice", withNUL: kind != .postgres) }
            try await sync.store.repository(EveryType.self).insert(seed)
            let writers = try (0..<3).map { _ in try everyTypeReplica("alice", url: url, conflicts: .clientWins) }
            let reader = try everyTypeReplica("alice", url: url)
            for writer in writers { try await writer.sync() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (number, writer) in writers.enumerated() {
                    group.addTask {
                        for round in 0..<8 {
                            let id = seed[(number * 3 + round) % seed.count].id
                            _ = try await writer.store.repository(EveryType.self).update(
                                where: \.id == id, set: [.set(\.count, to: number * 100 + round)])
                            try await writer.sync()
                        }
                    }
                }
                group.addTask {
                    for round in 0..<12 {
                        let id = seed[round % seed.count].id
                        _ = try await sync.store.repository(EveryType.self).update(
                            where: \.id == id, set: [.set(\.text, to: "app \(round)")])
                    }
                }
                group.addTask {
                    for _ in 0..<10 { try await reader.pull() }
                }
                try await group.waitForAll()
            }
            let server = try await sync.base.repository(EveryType.self).fetch(orderBy: [.ascending(\.id)])
            for replica in writers + [reader] {
                try await replica.sync()
                #expect(try await replica.base.repository(EveryType.self).fetch(orderBy: [.ascending(\.id)]) == server)
            }
        }
    }

    @Test("hand-written SQL inside a transaction of the server's store is refused: the log would miss it")
    func rawSQLThroughTheLoggedStoreIsRefused() async throws {
        try await withEveryTypeServer(.sqlite) { sync, _ in
            await #expect(throws: DepotError.self) {
                try await sync.store.write { tx in _ = try await tx.sql("DELETE FROM every_type") }
            }
        }
    }
}
