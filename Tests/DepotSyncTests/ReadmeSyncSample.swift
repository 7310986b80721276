// swift-format-ignore-file: OrderedImports
import DepotSQLite
import DepotTestSupport
import Testing

// The README's DepotSync samples, compiled, and run below against a notes API on 127.0.0.1
// (NotesTestServer.swift).

// readme:begin
import Depot
import DepotHTTP
import DepotSync
import Foundation

@Entity("notes")
struct Note: Equatable, Codable {
    @PrimaryKey var id: Int
    var title: String
    var body: String
    var pinned: Bool
    var likes: Int
}

/// A note as the API sends it: absent members leave stored columns alone.
struct NoteDTO: Codable, Sendable {
    var id: Int
    @Field var title: String?
    @Field var body: String?
    @Field var pinned: Bool?
    @Field var likes: Int?

    init(id: Int) { self.id = id }
}

struct NoteMapper: PatchMapper {
    func patch(from dto: NoteDTO) -> Patch<Note> {
        Patch(key: dto.id).set(\.title, dto.$title).set(\.body, dto.$body).set(\.pinned, dto.$pinned)
            .set(\.likes, dto.$likes)
    }
}
// readme:end

// readme:begin
enum NotesAPI {
    /// GET /notes[?pinned=true]
    struct List: Endpoint {
        typealias Response = [NoteDTO]
        var pinnedOnly = false
        var path: String { "/notes" }
        var query: [URLQueryItem] { pinnedOnly ? [URLQueryItem(name: "pinned", value: "true")] : [] }
    }

    /// GET /notes/{id}: one note
    struct Get: Endpoint {
        typealias Response = NoteDTO
        var id: Int
        var path: String { "/notes/\(id)" }
    }

    /// GET /notes/changes[?cursor=C]: {"notes": […], "deleted": [3], "cursor": "…", "more": false}
    struct Changes: Endpoint {
        struct Page: Decodable, Sendable {
            var notes: [NoteDTO]
            var deleted: [Int]
            var cursor: String
            var more: Bool
            var expired: Bool?
        }
        typealias Response = Page
        var cursor: String?
        var path: String { "/notes/changes" }
        var query: [URLQueryItem] { cursor.map { [URLQueryItem(name: "cursor", value: $0)] } ?? [] }
    }

    /// POST /notes/{id}/changes with an Idempotency-Key: 200 applied, 409 {"note", "fieldTimes"} a conflict.
    struct Push: Endpoint {
        struct Body: Codable, Sendable {
            var changes: NoteDTO
            var base: NoteDTO?
            var deleted: Bool
            var editedAt: Date  // when the edit was made here: the server keeps it per field
        }
        struct Conflict: Codable {
            var note: Note
            var fieldTimes: [String: Date]  // when each field was last written on the server
        }
        typealias Response = PushResult<Note>
        var id: Int
        var change: Body
        var idempotencyKey: String
        var method: HTTPMethod { .post }
        var path: String { "/notes/\(id)/changes" }
        var headers: HeaderFields { ["Idempotency-Key": idempotencyKey] }
        var body: RequestBody { .json(change) }
        var isIdempotent: Bool { true }  // the key makes a repeated delivery harmless
        var acceptedStatuses: Range<Int> { 200..<410 }
        var responseDecoder: ResponseDecoder<PushResult<Note>> {
            let name = "POST \(path)"
            return ResponseDecoder { response, decoder in
                switch response.status {
                case 200..<300: return .applied
                case 409:
                    let conflict = try decoder.decode(Conflict.self, from: response.body)
                    return .conflict(RemoteRow(conflict.note, fieldTimes: conflict.fieldTimes))
                default: throw StatusPolicy().error(for: response, endpoint: name)
                }
            }
        }
    }
}

struct NotesFeed: SyncFeed {
    func request(after cursor: String?) -> NotesAPI.Changes { NotesAPI.Changes(cursor: cursor) }

    func page(from response: NotesAPI.Changes.Page) -> FeedPage<Note> {
        if response.expired == true { return .expired }
        return FeedPage(
            changes: response.notes.map(NoteMapper().patch(from:)), deletedKeys: response.deleted,
            cursor: response.cursor, hasMore: response.more)
    }
}

struct NotesPush: SyncPush {
    func request(for change: OutgoingChange<Note>) throws -> NotesAPI.Push {
        let id = try change.key(as: Int.self)
        var changes = NoteDTO(id: id)
        changes.$title = change.value(\.title)
        changes.$body = change.value(\.body)
        changes.$pinned = change.value(\.pinned)
        changes.$likes = change.value(\.likes)
        var base = NoteDTO(id: id)  // the whole row before the edit: the server compares what it changes
        base.$title = change.baseValue(\.title)
        base.$body = change.baseValue(\.body)
        base.$pinned = change.baseValue(\.pinned)
        base.$likes = change.baseValue(\.likes)
        return NotesAPI.Push(
            id: id,
            change: .init(
                changes: changes, base: change.baseValues == nil ? nil : base, deleted: change.operation == .delete,
                editedAt: change.editedAt),
            idempotencyKey: change.idempotencyKey)
    }
}
// readme:end

// readme:begin
/// The pinned notes: the stored ones at once, then again each time a refresh stores new rows
/// (when the stored ones are older than five minutes).
func showPinnedNotes(loader: ResourceLoader, show: ([Note], _ isRefreshing: Bool) -> Void) async throws {
    let pinned = Resource(
        NotesAPI.List(pinnedOnly: true), mapper: NoteMapper(), where: \.pinned == true,
        orderBy: [.ascending(\.title)], policy: .staleWhileRevalidate(maxAge: .seconds(300)))
    for try await snapshot in loader.observe(pinned) {
        show(snapshot.rows, snapshot.refresh.isRefreshing)
    }
}
// readme:end

// readme:begin
/// One note: the stored one, or fetched once and stored.
func note(id: Int, loader: ResourceLoader) async throws -> Note? {
    let resource = Resource(one: NotesAPI.Get(id: id), mapper: NoteMapper(), where: \.id == id)
    return try await loader.load(resource).first
}
// readme:end

// readme:begin
/// The app's sync engine: made once at launch, beside the store.
func notesEngine(store: any Store, client: APIClient) -> SyncEngine {
    SyncEngine(
        store: store, client: client,
        entities: [.entity(Note.self, feed: NotesFeed(), push: NotesPush(), conflicts: .lastWriterWins)])
}

/// Pins a note: stored at once (offline too) and recorded in the outbox in the same transaction;
/// then a sync pushes the outbox in order and pulls the feed.
func pin(noteID: Int, engine: SyncEngine) async throws -> SyncReport {
    let notes = engine.store.repository(Note.self)  // the ordinary repository API
    try await notes.update(where: \.id == noteID, set: [.set(\.pinned, to: true)])
    let report = try await engine.sync()  // report.pushed, .conflicts, .pulledRows, …
    for change in try await engine.rejectedChanges() {  // a 4xx: kept, not retried forever
        if let rejection = change.rejection { print(rejection) }  // status, endpoint and the server's message
        try await engine.discard(change)  // or engine.retry(change), engine.rebase(change, onto: patch)
    }
    return report
}
// readme:end

// readme:begin
let likesAddUp = ConflictPolicy<Note>.merge { conflict in
    var merged = try conflict.remote(withLocal: conflict.changedColumns.filter { $0 != "likes" })
    // Both sides' likes since the base count.
    merged.likes = conflict.remote.likes + conflict.local.likes - (conflict.base?.likes ?? 0)
    return merged
}
// readme:end

@Suite("README: DepotSync samples")
struct ReadmeSyncSampleTests {
    static let base = Note(id: 7, title: "Groceries", body: "milk", pinned: false, likes: 10)

    static func conflict(local: Note, remote: Note, changed: [String], remoteTimes: [String: Date] = [:]) -> Conflict<
        Note
    > {
        Conflict(
            base: base, local: local, remote: remote, changedColumns: changed,
            localEditedAt: Date(timeIntervalSince1970: 100), remoteFieldTimes: remoteTimes)
    }

    @Test("the merge policy of the README adds both sides' likes and keeps the local title")
    func mergeAddsLikes() throws {
        var local = Self.base
        local.likes = 12
        local.title = "Groceries!"
        var remote = Self.base
        remote.likes = 15
        remote.body = "milk, eggs"
        let merged = try likesAddUp.resolve(Self.conflict(local: local, remote: remote, changed: ["title", "likes"]))
        #expect(merged == Note(id: 7, title: "Groceries!", body: "milk, eggs", pinned: false, likes: 17))
    }

    @Test("server wins, client wins and last writer wins choose as documented")
    func builtInPolicies() throws {
        var local = Self.base
        local.title = "Mine"
        var remote = Self.base
        remote.title = "Theirs"
        remote.body = "eggs"
        let conflict = Self.conflict(
            local: local, remote: remote, changed: ["title"], remoteTimes: ["title": Date(timeIntervalSince1970: 50)])
        #expect(try ConflictPolicy<Note>.serverWins.resolve(conflict) == remote)
        var clientWins = remote
        clientWins.title = "Mine"
        #expect(try ConflictPolicy<Note>.clientWins.resolve(conflict) == clientWins)
        #expect(try ConflictPolicy<Note>.lastWriterWins.resolve(conflict) == clientWins)  // 100 > 50
        let later = Self.conflict(
            local: local, remote: remote, changed: ["title"], remoteTimes: ["title": Date(timeIntervalSince1970: 150)])
        #expect(try ConflictPolicy<Note>.lastWriterWins.resolve(later) == remote)
    }
}

@Suite("README: DepotSync samples against a notes API", .timeLimit(.minutes(10)))
struct ReadmeSyncSampleRunTests {
    static let notes = [
        Note(id: 1, title: "Groceries", body: "milk", pinned: true, likes: 10),
        Note(id: 2, title: "Books", body: "Dune", pinned: true, likes: 0),
        Note(id: 3, title: "Ideas", body: "", pinned: false, likes: 2),
        Note(id: 4, title: "Recipes", body: "bread", pinned: false, likes: 5),
    ]

    /// `body` with a notes API serving ``notes`` and a client for it; the server stops after.
    static func withNotesAPI(
        clock: TestClock? = nil, _ body: (NotesTestServer, APIClient) async throws -> Void
    ) async throws {
        let (server, url) = try await NotesTestServer.start(notes, clock: clock.map(\.function) ?? Date.init)
        try await withCleanup {
            try await body(server, APIClient(baseURL: url, configuration: .patient))
        } cleanup: {
            await server.stop()
        }
    }

    @Test("the cached screen shows the stored pinned notes at once, then the API's, and reads the store while fresh")
    func cachedScreen() async throws {
        try await Self.withNotesAPI { server, client in
            let store = try SQLiteStore.temporary()
            let loader = try ResourceLoader(engine: notesEngine(store: store, client: client))
            let pinned = Self.notes.filter(\.pinned).sorted { $0.title < $1.title }
            // Shown until the refreshed rows are: the rows and the refresh state of each call.
            let (shown, shows) = AsyncStream.makeStream(of: ([Note], Bool).self)
            let screen = Task {
                try await showPinnedNotes(loader: loader) { shows.yield(($0, $1)) }
            }
            var seen: [([Note], Bool)] = []
            for await snapshot in shown {
                seen.append(snapshot)
                if snapshot.0 == pinned && !snapshot.1 { break }
            }
            screen.cancel()
            _ = await screen.result
            #expect(seen.first?.0 == [])  // nothing stored yet: the empty list at once
            let stored = try await store.repository(Note.self).fetch(orderBy: [.ascending(\.id)])
            #expect(stored == Array(pinned.reversed()))
            #expect(server.requests == ["GET /notes?pinned=true"])

            // Fresh (under five minutes old): the next screen shows the stored rows and asks nothing.
            let (again, againShows) = AsyncStream.makeStream(of: ([Note], Bool).self)
            let second = Task {
                try await showPinnedNotes(loader: loader) { againShows.yield(($0, $1)) }
            }
            var first: ([Note], Bool)?
            for await snapshot in again {
                first = snapshot
                break
            }
            second.cancel()
            _ = await second.result
            #expect(first?.0 == pinned)
            #expect(first?.1 == false)
            #expect(server.requests == ["GET /notes?pinned=true"])
        }
    }

    @Test("one note is fetched once and stored, then read from the store, with the server gone too")
    func oneNote() async throws {
        let store = try SQLiteStore.temporary()
        var loader: ResourceLoader?
        try await Self.withNotesAPI { server, api in
            let made = try ResourceLoader(engine: notesEngine(store: store, client: api))
            loader = made
            let fetched = try await note(id: 3, loader: made)
            let stored = try await note(id: 3, loader: made)
            #expect(fetched == Self.notes[2])
            #expect(stored == Self.notes[2])
            // No such note, and nothing stored: the API's answer (404) is the error.
            let missing = await #expect(throws: HTTPError.self) { try await note(id: 9, loader: made) }
            #expect(missing?.status == 404)
            #expect(server.requests == ["GET /notes/3", "GET /notes/9"])
        }
        let offline = try await note(id: 3, loader: try #require(loader))  // the server is gone
        #expect(offline == Self.notes[2])
    }

    @Test("pinning a note stores it and records it; the sync pushes it, and a rejected pin is discarded")
    func pinAndSync() async throws {
        try await Self.withNotesAPI { server, client in
            let store = try SQLiteStore.temporary()
            let engine = notesEngine(store: store, client: client)
            #expect(try await engine.sync().pulledRows == 4)  // the first pull: a full copy
            let report = try await pin(noteID: 3, engine: engine)
            #expect(report.pushed == 1)
            #expect(report.conflicts == 0)
            #expect(server.notes.first { $0.id == 3 }?.pinned == true)
            #expect(try await engine.store.repository(Note.self).fetch(orderBy: [.ascending(\.id)]) == server.notes)

            // Note 4 deleted on the server meanwhile: its pin answers 404, is kept as a rejection,
            // and discarded; the next sync leaves this replica equal to the server.
            server.delete(id: 4)
            let rejected = try await pin(noteID: 4, engine: engine)
            #expect(rejected.rejected == 1)
            #expect(try await engine.rejectedChanges().isEmpty)
            _ = try await engine.sync()
            #expect(try await engine.store.repository(Note.self).fetch(orderBy: [.ascending(\.id)]) == server.notes)
            #expect(server.notes.map(\.id) == [1, 2, 3])
        }
    }

    @Test("last writer wins compares the server's field times: an older local edit loses, a newer one wins")
    func lastWriterWinsUsesFieldTimes() async throws {
        let clock = TestClock(at: Date(timeIntervalSince1970: 1_000))
        try await Self.withNotesAPI(clock: clock) { server, client in
            let engine = SyncEngine(
                store: try SQLiteStore.temporary(), client: client,
                entities: [.entity(Note.self, feed: NotesFeed(), push: NotesPush(), conflicts: .lastWriterWins)],
                clock: clock.function)
            _ = try await engine.sync()
            let notes = engine.store.repository(Note.self)
            var groceries = Self.notes[0]

            // Edited here at 1,100, then on the server at 1,200: the server's title stands.
            clock.set(Date(timeIntervalSince1970: 1_100))
            try await notes.update(where: \.id == 1, set: [.set(\.title, to: "Mine")])
            clock.set(Date(timeIntervalSince1970: 1_200))
            groceries.title = "Theirs"
            server.write(groceries, fields: ["title"])
            clock.set(Date(timeIntervalSince1970: 1_300))
            #expect(try await engine.sync().conflicts == 1)
            #expect(try await notes.fetch(where: \.id == 1) == [groceries])
            #expect(server.notes[0] == groceries)

            // On the server at 1,400, then here at 1,500: this title stands, the server's body too.
            clock.set(Date(timeIntervalSince1970: 1_400))
            groceries.title = "Theirs again"
            groceries.body = "milk, eggs"
            server.write(groceries, fields: ["title", "body"])
            clock.set(Date(timeIntervalSince1970: 1_500))
            try await notes.update(where: \.id == 1, set: [.set(\.title, to: "Mine again")])
            clock.set(Date(timeIntervalSince1970: 1_600))
            #expect(try await engine.sync().conflicts == 1)
            groceries.title = "Mine again"
            #expect(try await notes.fetch(where: \.id == 1) == [groceries])
            #expect(server.notes[0] == groceries)
        }
    }
}
