import Depot
import DepotTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// The notes API the README's DepotSync samples talk to, served on 127.0.0.1 from memory: what a
/// team's own backend answers, written from the wire shapes the samples declare (`NotesAPI`).
///
/// - `GET /notes[?pinned=true]`: every note (or the pinned ones), in key order.
/// - `GET /notes/{id}`: one note, or 404.
/// - `GET /notes/changes[?cursor=C]`: without a cursor every note; with one, the notes changed and
///   the keys deleted after it, in the order they changed, at most ``pageSize`` at a time.
/// - `POST /notes/{id}/changes` with an `Idempotency-Key`: 200 applied (the same answer again for a
///   key it answered), 409 `{"note", "fieldTimes"}` when a changed field's base is not the server's
///   value, 404 an edit of a note that is gone, 422 a new note without every field.
final class NotesTestServer: Sendable {
    struct State {
        var notes: [Int: Note] = [:]
        /// When each field of a note was last written (an edit's time, capped at the server's clock).
        var fieldTimes: [Int: [String: Date]] = [:]
        /// The log number of each note's last change, and of each deletion.
        var changed: [Int: Int] = [:]
        var deleted: [Int: Int] = [:]
        var version = 0
        /// The answer given to each idempotency key.
        var answers: [String: Answer] = [:]
        /// Every request, as "METHOD /path?query".
        var requests: [String] = []
    }

    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var body: Data
    }

    let state = Mutex(State())
    let pageSize: Int
    private let clock: @Sendable () -> Date
    private let server: Mutex<LocalHTTPServer?> = Mutex(nil)

    private init(pageSize: Int, clock: @escaping @Sendable () -> Date) {
        self.pageSize = pageSize
        self.clock = clock
    }

    /// Serves `notes` (written at `clock()`), until ``stop()``.
    static func start(
        _ notes: [Note], pageSize: Int = 2, clock: @escaping @Sendable () -> Date = Date.init
    ) async throws -> (NotesTestServer, URL) {
        let notesServer = NotesTestServer(pageSize: pageSize, clock: clock)
        for note in notes { notesServer.write(note) }
        let router = Router()
        notesServer.addRoutes(to: router)
        let http = try await LocalHTTPServer.start(router)
        notesServer.server.withLock { $0 = http }
        return (notesServer, http.url)
    }

    func stop() async {
        let http = server.withLock { $0 }
        await http?.stop()
    }

    /// A write on the server (another device's, say): `fields` of `note` are written at `clock()`
    /// (every field of a new note).
    func write(_ note: Note, fields: [String] = ["title", "body", "pinned", "likes"]) {
        let now = clock()
        state.withLock { state in
            state.version += 1
            state.notes[note.id] = note
            state.deleted[note.id] = nil
            state.changed[note.id] = state.version
            for field in fields { state.fieldTimes[note.id, default: [:]][field] = now }
        }
    }

    /// A delete on the server.
    func delete(id: Int) {
        state.withLock { Self.remove(id, from: &$0) }
    }

    private static func remove(_ id: Int, from state: inout State) {
        state.version += 1
        state.notes[id] = nil
        state.changed[id] = nil
        state.fieldTimes[id] = nil
        state.deleted[id] = state.version
    }

    var notes: [Note] { state.withLock { $0.notes.values.sorted { $0.id < $1.id } } }
    var requests: [String] { state.withLock { $0.requests } }

    // MARK: - Routes

    private func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/notes") { request, _ -> Response in
            self.log(request)
            let pinnedOnly = Self.query(request)["pinned"] == "true"
            return try Self.json(self.notes.filter { !pinnedOnly || $0.pinned })
        }
        router.get("/notes/changes") { request, _ -> Response in
            self.log(request)
            return try self.changes(after: Self.query(request)["cursor"])
        }
        router.get("/notes/:id") { request, context -> Response in
            self.log(request)
            let id = try context.parameters.require("id", as: Int.self)
            guard let note = self.state.withLock({ $0.notes[id] }) else { return Response(status: .notFound) }
            return try Self.json(note)
        }
        router.post("/notes/:id/changes") { request, context -> Response in
            self.log(request)
            let id = try context.parameters.require("id", as: Int.self)
            guard let name = HTTPField.Name("Idempotency-Key"), let key = request.headers[name] else {
                return Response(status: .badRequest)
            }
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let body = try JSONDecoder().decode(NotesAPI.Push.Body.self, from: Data(bytes.readableBytesView))
            let answer = try self.state.withLock { state in
                if let given = state.answers[key] { return given }
                let answer = try self.push(body, id: id, into: &state)
                if answer.status != .conflict { state.answers[key] = answer }
                return answer
            }
            return Response(
                status: answer.status, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
    }

    private func changes(after cursor: String?) throws -> Response {
        struct Page: Encodable {
            var notes: [Note]
            var deleted: [Int]
            var cursor: String
            var more: Bool
        }
        return try state.withLock { state in
            guard let cursor else {
                let all = state.notes.values.sorted { $0.id < $1.id }
                return try Self.json(Page(notes: all, deleted: [], cursor: String(state.version), more: false))
            }
            guard let after = Int(cursor), after >= 0, after <= state.version else {
                return Response(status: .badRequest)
            }
            let changed = state.changed.map { ($0.value, $0.key, false) }
            let entries = (changed + state.deleted.map { ($0.value, $0.key, true) })
                .filter { $0.0 > after }.sorted { $0.0 < $1.0 }
            let page = entries.prefix(pageSize)
            return try Self.json(
                Page(
                    notes: page.filter { !$0.2 }.compactMap { state.notes[$0.1] },
                    deleted: page.filter { $0.2 }.map(\.1), cursor: String(page.last?.0 ?? after),
                    more: entries.count > page.count))
        }
    }

    private func push(_ body: NotesAPI.Push.Body, id: Int, into state: inout State) throws -> Answer {
        let now = min(body.editedAt, clock())
        guard var note = state.notes[id] else {
            guard body.base == nil, !body.deleted else { return Answer(status: .notFound, body: Data()) }
            let changes = body.changes
            guard case .value(let title) = changes.$title, case .value(let text) = changes.$body,
                case .value(let pinned) = changes.$pinned, case .value(let likes) = changes.$likes
            else {
                return Answer(
                    status: .unprocessableContent, body: Data(#"{"error":"a new note needs every field"}"#.utf8))
            }
            state.version += 1
            state.notes[id] = Note(id: id, title: title, body: text, pinned: pinned, likes: likes)
            state.changed[id] = state.version
            state.fieldTimes[id] = ["title": now, "body": now, "pinned": now, "likes": now]
            return Answer(status: .ok, body: Data("{}".utf8))
        }
        // A changed field whose base is not the server's value (or a delete over any such field)
        // is a conflict.
        let base = body.base ?? NoteDTO(id: id)
        let compared =
            body.deleted
            ? ["title", "body", "pinned", "likes"]
            : ["title", "body", "pinned", "likes"].filter { Self.field($0, of: body.changes) != .absent }
        let stale = compared.contains { Self.field($0, of: base) != Self.field($0, of: NoteDTO(note)) }
        if stale {
            let conflict = NotesAPI.Push.Conflict(note: note, fieldTimes: state.fieldTimes[id] ?? [:])
            return Answer(status: .conflict, body: try JSONEncoder().encode(conflict))
        }
        if body.deleted {
            Self.remove(id, from: &state)
            return Answer(status: .ok, body: Data("{}".utf8))
        }
        state.version += 1
        if case .value(let title) = body.changes.$title { note.title = title }
        if case .value(let text) = body.changes.$body { note.body = text }
        if case .value(let pinned) = body.changes.$pinned { note.pinned = pinned }
        if case .value(let likes) = body.changes.$likes { note.likes = likes }
        state.notes[id] = note
        state.changed[id] = state.version
        for field in compared { state.fieldTimes[id, default: [:]][field] = now }
        return Answer(status: .ok, body: Data("{}".utf8))
    }

    // MARK: - Helpers

    /// A field of a DTO as text, for comparing a push's base with the server's note.
    private enum FieldText: Equatable {
        case absent
        case value(String)
    }

    private static func field(_ name: String, of dto: NoteDTO) -> FieldText {
        func text<Value>(_ field: Field<Value>) -> FieldText {
            switch field {
            case .absent: .absent
            case .null: .value("null")
            case .value(let value): .value("\(value)")
            }
        }
        switch name {
        case "title": return text(dto.$title)
        case "body": return text(dto.$body)
        case "pinned": return text(dto.$pinned)
        default: return text(dto.$likes)
        }
    }

    private func log(_ request: Request) {
        state.withLock { $0.requests.append("\(request.method) \(request.uri)") }
    }

    private static func query(_ request: Request) -> [String: String] {
        var items: [String: String] = [:]
        for item in URLComponents(string: "\(request.uri)")?.queryItems ?? [] { items[item.name] = item.value }
        return items
    }

    private static func json(_ value: some Encodable) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value))))
    }
}

extension NoteDTO {
    /// Every field of `note`.
    init(_ note: Note) {
        self.init(id: note.id)
        title = note.title
        body = note.body
        pinned = note.pinned
        likes = note.likes
    }
}
