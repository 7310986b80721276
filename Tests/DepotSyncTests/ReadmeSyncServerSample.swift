// swift-format-ignore-file: OrderedImports
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Testing

// The README's DepotSyncServer sample, compiled, and run below with two clients.

// readme:begin
import DepotSyncServer
import DepotSyncHummingbird
import Hummingbird

@Entity("shared_notes")
struct SharedNote: Equatable {
    @PrimaryKey var id: UUID
    var ownerID: String
    var title: String
    var pinned: Bool
}

struct User: SyncCaller {
    var id: String
}

/// The server: a feed and a push endpoint for notes, each user seeing and pushing their own.
func notesRouter(
    store: any Store, authenticate: @escaping @Sendable (_ authorization: String?) async throws -> User?
) async throws -> (SyncServer<User>, Router<BasicRequestContext>) {
    let sync = try await SyncServer<User>.open(
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
func notesEngine(store: any Store, api: URL, token: String) -> SyncEngine {
    var configuration = APIClient.Configuration()
    configuration.headers["Authorization"] = "Bearer \(token)"
    return SyncEngine(
        store: store, client: APIClient(baseURL: api, configuration: configuration),
        entities: [.entity(SharedNote.self, server: "/sync", conflicts: .lastWriterWins)])
}
// readme:end

@Suite("README: DepotSyncServer")
struct ReadmeSyncServerSampleTests {
    @Test("the README's server and client: a note written offline reaches its owner's other device only")
    func sampleRuns() async throws {
        let tokens = ["token-a": "ada", "token-b": "bo"]
        let (sync, router) = try await notesRouter(store: try SQLiteStore.temporary()) { header in
            tokens[String((header ?? "").dropFirst("Bearer ".count))].map(User.init)
        }
        let http = try await LocalHTTPServer.start(router)
        try await withCleanup {
            let laptop = notesEngine(store: try SQLiteStore.temporary(), api: http.url, token: "token-a")
            let phone = notesEngine(store: try SQLiteStore.temporary(), api: http.url, token: "token-a")
            let other = notesEngine(store: try SQLiteStore.temporary(), api: http.url, token: "token-b")
            let note = SharedNote(id: UUID(), ownerID: "ada", title: "offline", pinned: false)
            try await laptop.store.repository(SharedNote.self).insert(note)
            try await laptop.sync()
            try await phone.sync()
            try await other.sync()
            #expect(try await phone.base.repository(SharedNote.self).fetchAll() == [note])
            #expect(try await other.base.repository(SharedNote.self).count() == 0)
            #expect(try await sync.base.repository(SharedNote.self).fetchAll() == [note])
            let stranger = notesEngine(store: try SQLiteStore.temporary(), api: http.url, token: "wrong")
            await #expect(throws: DepotHTTP.HTTPError.self) { try await stranger.sync() }
        } cleanup: {
            await http.stop()
        }
    }
}
