// swift-format-ignore-file: OrderedImports
import DepotSQLite
import DepotTestSupport
import Testing

// The README's DepotSyncServer sample, compiled, and run below with two clients.

// readme:begin
import Depot
import DepotHTTP
import DepotSync
import DepotSyncServer
import DepotSyncHummingbird
import Foundation
import Hummingbird

@Entity("shared_notes")
struct SharedNote: Equatable {
    @PrimaryKey var id: UUID
    var ownerID: String
    var title: String
    var pinned: Bool
}

struct Account: SyncCaller {
    var id: String
}

/// The server: a feed and a push endpoint for notes, each user seeing and pushing their own.
func notesRouter(
    store: any Store, authenticate: @escaping @Sendable (_ authorization: String?) async throws -> Account?
) async throws -> (SyncServer<Account>, Router<BasicRequestContext>) {
    let sync = try await SyncServer<Account>.open(
        store: store,
        tables: [
            .table(
                SharedNote.self,
                scope: { user in \.ownerID == user.id },  // the rows a user receives
                authorize: { write, user in write.row.ownerID == user.id })  // the writes a user may push
        ])
    let router = Router()
    let routes = sync.routes(context: BasicRequestContext.self) { request, _ in
        try await authenticate(request.headers[.authorization])  // nil answers 401
    }
    router.addRoutes(routes, atPath: "/sync")
    return (sync, router)
}

/// The client: the entity declared, nothing else written.
func sharedNotesEngine(store: any Store, api: URL, token: String) -> SyncEngine {
    var configuration = APIClient.Configuration()
    configuration.headers["Authorization"] = "Bearer \(token)"
    return SyncEngine(
        store: store, client: APIClient(baseURL: api, configuration: configuration),
        entities: [.entity(SharedNote.self, server: "/sync", conflicts: .lastWriterWins)])
}
// readme:end

// readme:begin
import DepotPostgres

/// The notes server's process: its data in PostgreSQL, the sync routes under /sync, on the port
/// `PORT` names (8080 when unset), until SIGINT or SIGTERM. `tokens` maps each bearer token to the
/// user it was issued to.
func serveNotes(databaseURL: String, tokens: [String: String]) async throws {
    let store = try PostgresStore(url: databaseURL)
    let (_, router) = try await notesRouter(store: store) { authorization in
        guard let token = authorization?.split(separator: " ").last else { return nil }  // "Bearer TOKEN"
        return tokens[String(token)].map { Account(id: $0) }  // nil: 401
    }
    let port = ProcessInfo.processInfo.environment["PORT"].flatMap { Int($0) } ?? 8080
    let address = BindAddress.hostname("127.0.0.1", port: port)  // "0.0.0.0" to serve other machines
    try await Application(router: router, configuration: .init(address: address)).runService()
}
// readme:end

// readme:begin
/// A note written on this device, offline too: stored and shown at once, sent by a sync.
func writeNote(title: String, owner: Account, engine: SyncEngine) async throws {
    let note = SharedNote(id: UUID(), ownerID: owner.id, title: title, pinned: false)  // a key no device shares
    try await engine.store.repository(SharedNote.self).insert(note)  // and one outbox entry
    do {
        try await engine.sync()  // pushes the outbox in order, then pulls what others wrote
    } catch {
        // Offline, or the server unreachable: the note waits in the outbox for the next sync.
    }
}
// readme:end

/// `body` with the README's notes server on 127.0.0.1 (its store a temporary file), accepting the
/// bearer `tokens` (token → account id); the server stops after.
func withSharedNotesServer(
    _ tokens: [String: String], _ body: (SyncServer<Account>, URL) async throws -> Void
) async throws {
    let (sync, router) = try await notesRouter(store: try SQLiteStore.temporary()) { header in
        tokens[String((header ?? "").dropFirst("Bearer ".count))].map(Account.init)
    }
    let http = try await LocalHTTPServer.start(router)
    try await withCleanup {
        try await body(sync, http.url)
    } cleanup: {
        await http.stop()
    }
}

@Suite("README: DepotSyncServer")
struct ReadmeSyncServerSampleTests {
    @Test("the README's server and client: a note written offline reaches its owner's other device only")
    func sampleRuns() async throws {
        try await withSharedNotesServer(["token-a": "ada", "token-b": "bo"]) { sync, api in
            let laptop = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
            let phone = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
            let other = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-b")
            let note = SharedNote(id: UUID(), ownerID: "ada", title: "offline", pinned: false)
            try await laptop.store.repository(SharedNote.self).insert(note)
            try await laptop.sync()
            try await phone.sync()
            try await other.sync()
            #expect(try await phone.base.repository(SharedNote.self).fetchAll() == [note])
            #expect(try await other.base.repository(SharedNote.self).count() == 0)
            #expect(try await sync.base.repository(SharedNote.self).fetchAll() == [note])
            let stranger = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "wrong")
            await #expect(throws: DepotHTTP.HTTPError.self) { try await stranger.sync() }
        }
    }

    @Test(
        "a note written offline waits in the outbox, and reaches the other device with the first sync that gets through"
    )
    func noteWrittenOffline() async throws {
        try await withSharedNotesServer(["token-a": "ada"]) { _, api in
            // Offline: a port that refuses connections. The write stands; the sync's failure is swallowed.
            let refusing = try Loopback.refusingPort()
            defer { refusing.close() }
            let offlineAPI = try #require(URL(string: "http://127.0.0.1:\(refusing.port)"))
            let store = try SQLiteStore.temporary()
            let offline = sharedNotesEngine(store: store, api: offlineAPI, token: "token-a")
            try await writeNote(title: "on the train", owner: Account(id: "ada"), engine: offline)
            #expect(try await offline.store.repository(SharedNote.self).fetch().map(\.title) == ["on the train"])
            #expect(try await offline.status().pendingChanges == 1)

            // Back online (the same store, the server reachable): the next write's sync sends both.
            let online = sharedNotesEngine(store: store, api: api, token: "token-a")
            try await writeNote(title: "at home", owner: Account(id: "ada"), engine: online)
            #expect(try await online.status().pendingChanges == 0)
            let phone = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
            try await phone.sync()
            let titles = try await phone.base.repository(SharedNote.self).fetch(orderBy: [.ascending(\.title)])
            #expect(titles.map(\.title) == ["at home", "on the train"])
        }
    }
}
