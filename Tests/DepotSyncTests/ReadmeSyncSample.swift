import Depot
import DepotHTTP
import DepotSync
import Foundation
import Testing

// The README's DepotSync samples, compiled (and the policies run below).

// readme:begin
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

    /// POST /notes/{id}/changes with an Idempotency-Key: 200 applied, 409 {"note": …} a conflict.
    struct Push: Endpoint {
        struct Body: Encodable, Sendable {
            var changes: NoteDTO
            var base: NoteDTO?
            var deleted: Bool
        }
        struct Conflict: Decodable { var note: Note }
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
                case 409: return .conflict(RemoteRow(try decoder.decode(Conflict.self, from: response.body).note))
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
        var base = NoteDTO(id: id)
        base.$title = change.changes["title"] == nil ? .absent : change.baseValue(\.title)
        base.$body = change.changes["body"] == nil ? .absent : change.baseValue(\.body)
        base.$pinned = change.changes["pinned"] == nil ? .absent : change.baseValue(\.pinned)
        base.$likes = change.changes["likes"] == nil ? .absent : change.baseValue(\.likes)
        return NotesAPI.Push(
            id: id,
            change: .init(
                changes: changes, base: change.baseValues == nil ? nil : base, deleted: change.operation == .delete),
            idempotencyKey: change.idempotencyKey)
    }
}
// readme:end

/// A cached screen.
func readmeCachedScreen(store: any Store, client: APIClient, show: @escaping @Sendable ([Note], Bool) -> Void)
    async throws
{
    // readme:begin
    let pinned = Resource(
        NotesAPI.List(pinnedOnly: true), mapper: NoteMapper(), where: \.pinned == true,
        orderBy: [.ascending(\.title)], policy: .staleWhileRevalidate(maxAge: .seconds(300)))
    let loader = ResourceLoader(store: store, client: client)
    for try await snapshot in loader.observe(pinned) {
        show(snapshot.rows, snapshot.refresh.isRefreshing)  // stored rows at once, then refreshed
    }
    // readme:end
}

/// One note, offline first.
func readmeOneNote(store: any Store, client: APIClient) async throws -> Note? {
    // readme:begin
    func obtainNote(id: Int) -> Resource<NotesAPI.Get, NoteMapper> {
        Resource(one: NotesAPI.Get(id: id), mapper: NoteMapper(), where: \.id == id)
    }
    let loader = ResourceLoader(store: store, client: client)
    let note = try await loader.load(obtainNote(id: 7)).first  // stored, or fetched once and stored
    // readme:end
    return note
}

/// A feed and offline edits.
func readmeOfflineEdits(store: any Store, client: APIClient) async throws {
    // readme:begin
    let engine = SyncEngine(
        store: store, client: client,
        entities: [.entity(Note.self, feed: NotesFeed(), push: NotesPush(), conflicts: .lastWriterWins)])
    let notes = engine.store.repository(Note.self)  // the ordinary repository API
    try await notes.update(where: \.id == 7, set: [.set(\.pinned, to: true)])
    // Offline: stored at once, and recorded in the outbox in the same transaction.
    let report = try await engine.sync()  // push the outbox in order, then pull the feed
    print(report.pushed, report.conflicts, report.pulledRows)
    for change in try await engine.rejectedChanges() {  // a 4xx: kept, not retried forever
        print(change.rejection?.message ?? "")
        try await engine.discard(change)  // or engine.retry(change), engine.rebase(change, onto: patch)
    }
    // readme:end
}

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
