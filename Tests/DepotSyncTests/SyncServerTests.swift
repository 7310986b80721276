import Depot
import DepotHTTP
import DepotPostgres
import DepotSQLite
import DepotSync
import DepotSyncHummingbird
import DepotSyncServer
import DepotTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import InMemoryTracing
import Testing
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A note owned by one user: what the server half's tests sync.
struct ServedNote: Entity, Equatable {
    var id: String
    var ownerID: String
    var title: String
    var body: String?
    var editedAt: Date
    var stars: Int

    static let schema = Schema<ServedNote>("served_notes", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.ownerID, "owner_id")
        Column(\.title, "title")
        Column(\.body, "body")
        Column(\.editedAt, "edited_at")
        Column(\.stars, "stars")
    }
}

/// The caller of the tests' sync server: a user named by the bearer token.
struct NoteUser: SyncCaller {
    var id: String
}

/// A sync server of notes on `store` (a fresh SQLite file by default), served on 127.0.0.1 under
/// `/sync`: each user sees and pushes their own notes. Stopped after `body`.
func withNotesServer(
    on given: (any Store)? = nil, authorize: Bool = true, conflicts: ConflictPolicy<ServedNote>? = nil,
    configuration: SyncServer<NoteUser>.Configuration = .init(),
    _ body: (SyncServer<NoteUser>, URL) async throws -> Void
) async throws {
    let store = try given ?? SQLiteStore.temporary()
    let sync = try await SyncServer<NoteUser>.open(
        store: store,
        tables: [
            .table(
                ServedNote.self, scope: { user in \.ownerID == user.id },
                authorize: authorize ? { @Sendable write, user in write.row.ownerID == user.id } : nil,
                conflicts: conflicts)
        ], configuration: configuration)
    try await serving(sync) { url in try await body(sync, url) }
}

/// `sync`'s routes under `/sync` on 127.0.0.1, the caller named by a bearer token; stopped after
/// `body`.
func serving(_ sync: SyncServer<NoteUser>, _ body: (URL) async throws -> Void) async throws {
    let router = Router()
    router.addRoutes(
        sync.routes(context: BasicRequestContext.self) { request, _ in
            guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
            return NoteUser(id: String(header.dropFirst("Bearer ".count)))
        }, atPath: "/sync")
    let http = try await LocalHTTPServer.start(router)
    try await withCleanup {
        try await body(http.url)
    } cleanup: {
        await http.stop()
    }
}

/// A user's replica: its own SQLite store and engine syncing notes with the server at `url`.
struct NotesReplica {
    let store: SQLiteStore
    let engine: SyncEngine

    init(_ user: String, url: URL, conflicts: ConflictPolicy<ServedNote> = .serverWins, pageSize: Int = 3) throws {
        store = try SQLiteStore.temporary()
        var configuration = APIClient.Configuration.patient
        configuration.headers["Authorization"] = "Bearer \(user)"
        engine = SyncEngine(
            store: store, client: APIClient(baseURL: url, configuration: configuration),
            entities: [.entity(ServedNote.self, server: "/sync", pageSize: pageSize, conflicts: conflicts)])
    }

    var notes: Repository<ServedNote> { engine.store.repository(ServedNote.self) }

    func all() async throws -> [ServedNote] {
        try await store.repository(ServedNote.self).fetch(orderBy: [.ascending(\.id)])
    }
}

func note(_ id: String, owner: String, title: String = "a note", stars: Int = 0) -> ServedNote {
    ServedNote(
        id: id, ownerID: owner, title: title, body: nil, editedAt: Date(timeIntervalSince1970: 1_700_000_000.000_001),
        stars: stars)
}

@Suite("DepotSyncServer")
struct SyncServerTests {
    @Test("notes created on one replica reach the owner's other replica and nobody else's")
    func scopedRoundTrip() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url)
            let alicePhone = try NotesReplica("alice", url: url)
            let bob = try NotesReplica("bob", url: url)
            try await sync.store.repository(ServedNote.self).insert(
                (1...7).map { note("n\($0)", owner: $0 % 2 == 0 ? "bob" : "alice") })
            var mine = note("a-new", owner: "alice", title: "café ☕️")
            mine.body = "line\nbreak"
            try await alice.notes.insert(mine)
            try await alice.engine.sync()
            try await alicePhone.engine.sync()
            try await bob.engine.sync()
            let server = try await sync.base.repository(ServedNote.self).fetch(orderBy: [.ascending(\.id)])
            #expect(try await alice.all() == server.filter { $0.ownerID == "alice" })
            #expect(try await alicePhone.all() == server.filter { $0.ownerID == "alice" })
            #expect(try await bob.all() == server.filter { $0.ownerID == "bob" })
            #expect(server.contains(mine))
        }
    }

    @Test("a row moved out of a caller's scope reaches them as a deletion, and the new owner as a row")
    func scopeExitIsADeletion() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url)
            let bob = try NotesReplica("bob", url: url)
            let notes = sync.store.repository(ServedNote.self)
            try await notes.insert([note("x", owner: "alice"), note("y", owner: "alice"), note("z", owner: "bob")])
            try await alice.engine.sync()
            try await bob.engine.sync()
            #expect(try await alice.all().map(\.id) == ["x", "y"])
            _ = try await notes.update(where: \.id == "x", set: [.set(\.ownerID, to: "bob")])
            _ = try await notes.remove("y")
            let report = try await alice.engine.sync()
            #expect(report.pulledDeletions == 2)
            #expect(try await alice.all().isEmpty)
            try await bob.engine.sync()
            #expect(try await bob.all().map(\.id) == ["x", "z"])
        }
    }

    @Test("a change page tells a caller about deletions only of rows it may have had")
    func noTombstonesOfOthersRows() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url)
            try await alice.engine.sync()
            let notes = sync.store.repository(ServedNote.self)
            try await notes.insert(note("bobs", owner: "bob"))
            _ = try await notes.remove("bobs")
            let page = try await sync.feed(table: "served_notes", cursor: nil, caller: NoteUser(id: "alice"))
            let changes = try await sync.feed(table: "served_notes", cursor: page.cursor, caller: NoteUser(id: "alice"))
            #expect(changes.rows.isEmpty && changes.deleted.isEmpty)
        }
    }

    @Test("without an authorize hook a table takes no pushes: the edit is kept as a rejection (403)")
    func readOnlyByDefault() async throws {
        try await withNotesServer(authorize: false) { sync, url in
            let alice = try NotesReplica("alice", url: url)
            try await alice.notes.insert(note("mine", owner: "alice"))
            let report = try await alice.engine.sync()
            #expect(report.rejected == 1)
            let rejected = try await alice.engine.rejectedChanges()
            #expect(rejected.count == 1)
            #expect(try await sync.base.repository(ServedNote.self).count() == 0)
        }
    }

    @Test("a push the hook refuses, or that would leave the caller's scope, writes nothing (403)")
    func authorizationAndScopeOfPushes() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url)
            try await alice.notes.insert(note("for-bob", owner: "bob"))
            let report = try await alice.engine.sync()
            #expect(report.rejected == 1)
            #expect(try await sync.base.repository(ServedNote.self).count() == 0)
            // Bob's note cannot be touched by alice, not even seen.
            try await sync.store.repository(ServedNote.self).insert(note("bobs", owner: "bob"))
            let (status, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "k1",
                body:
                    #"{"key":["bobs"],"operation":"delete","changes":{},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#
            )
            #expect(status == 200)  // nothing visible to delete: done, and nothing deleted
            #expect(try await sync.base.repository(ServedNote.self).find("bobs") != nil)
            let (update, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "k2",
                body: #"{"key":["bobs"],"operation":"set","changes":{"title":"mine"},"base":{"title":"a note"},"#
                    + #""edited_at":"2026-01-01T00:00:00Z"}"#)
            #expect(update == 404)
        }
    }

    @Test("an idempotency key answers its first request again, refuses another (422), and is per caller")
    func idempotency() async throws {
        try await withNotesServer { sync, url in
            let create =
                #"{"key":["k"],"operation":"set","changes":{"owner_id":"alice","title":"t","body":null,"#
                + #""edited_at":"2026-01-01T00:00:00Z","stars":1},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#
            let (first, answer) = try await SyncRawHTTP.push(url, user: "alice", key: "same", body: create)
            #expect(first == 200)
            _ = try await sync.store.repository(ServedNote.self).update(where: \.id == "k", set: [.set(\.stars, to: 5)])
            let (again, repeated) = try await SyncRawHTTP.push(url, user: "alice", key: "same", body: create)
            #expect(again == 200 && repeated == answer)
            #expect(try await sync.base.repository(ServedNote.self).find("k")?.stars == 5)
            let other = create.replacingOccurrences(of: #""title":"t""#, with: #""title":"u""#)
            let (reused, problem) = try await SyncRawHTTP.push(url, user: "alice", key: "same", body: other)
            #expect(reused == 422)
            #expect(problem.contains("Idempotency-Key 'same'"))
            let bobs = create.replacingOccurrences(of: "alice", with: "bob").replacingOccurrences(
                of: "[\"k\"]", with: "[\"b\"]")
            let (bob, _) = try await SyncRawHTTP.push(url, user: "bob", key: "same", body: bobs)
            #expect(bob == 200)
        }
    }

    @Test("a stale base is a 409 with the row; the client's policy resolves it and converges")
    func conflictsResolvedByTheClient() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url, conflicts: .clientWins)
            try await sync.store.repository(ServedNote.self).insert(note("c", owner: "alice"))
            try await alice.engine.sync()
            _ = try await sync.store.repository(ServedNote.self).update(
                where: \.id == "c", set: [.set(\.title, to: "server"), .set(\.stars, to: 3)])
            _ = try await alice.notes.update(where: \.id == "c", set: [.set(\.title, to: "client")])
            let report = try await alice.engine.sync()
            #expect(report.conflicts == 1)
            let server = try #require(try await sync.base.repository(ServedNote.self).find("c"))
            #expect(server.title == "client" && server.stars == 3)
            #expect(try await alice.all() == [server])
        }
    }

    @Test("a table's policy settles conflicts on the server, and the pushing client pulls the outcome")
    func conflictsResolvedOnTheServer() async throws {
        try await withNotesServer(conflicts: .serverWins) { sync, url in
            let alice = try NotesReplica("alice", url: url, conflicts: .clientWins)
            try await sync.store.repository(ServedNote.self).insert(note("s", owner: "alice"))
            try await alice.engine.sync()
            _ = try await sync.store.repository(ServedNote.self).update(
                where: \.id == "s", set: [.set(\.title, to: "server")])
            _ = try await alice.notes.update(where: \.id == "s", set: [.set(\.title, to: "client")])
            _ = try await alice.notes.update(where: \.id == "s", set: [.set(\.stars, to: 9)])
            try await alice.engine.sync()
            let server = try #require(try await sync.base.repository(ServedNote.self).find("s"))
            #expect(server.title == "server")
            try await alice.engine.sync()
            #expect(try await alice.all() == [server])
        }
    }

    @Test("a client whose cursor the pruned log no longer reaches copies in full, deletions included")
    func expiredCursorCopiesAgain() async throws {
        try await withNotesServer(configuration: .init(logLength: 3)) { sync, url in
            let alice = try NotesReplica("alice", url: url)
            let notes = sync.store.repository(ServedNote.self)
            try await notes.insert((1...5).map { note("e\($0)", owner: "alice") })
            try await alice.engine.sync()
            for round in 1...6 { _ = try await notes.update(where: \.id == "e1", set: [.set(\.stars, to: round)]) }
            _ = try await notes.remove("e2")
            let report = try await alice.engine.sync()
            #expect(report.fullCopies == 1)
            #expect(
                try await alice.all()
                    == (try await notes.fetch(where: \.ownerID == "alice", orderBy: [.ascending(\.id)])))
        }
    }

    @Test("requests without credentials answer 401 with WWW-Authenticate; unknown tables 404; bad cursors 400")
    func routeRefusals() async throws {
        try await withNotesServer { _, url in
            let (anonymous, _, headers) = try await SyncRawHTTP.get(
                url.appending(path: "sync/served_notes/feed"), user: nil)
            #expect(anonymous == 401 && headers["WWW-Authenticate"] == "Bearer")
            let (unknown, _, _) = try await SyncRawHTTP.get(url.appending(path: "sync/secrets/feed"), user: "alice")
            #expect(unknown == 404)
            let (forged, body, _) = try await SyncRawHTTP.get(
                URL(string: url.absoluteString + "/sync/served_notes/feed?cursor=copy:x:1:AAAA")!, user: "alice")
            #expect(forged == 400 || (forged == 200 && body.contains("\"expired\":true")))
            let (limit, _, _) = try await SyncRawHTTP.get(
                URL(string: url.absoluteString + "/sync/served_notes/feed?limit=0")!, user: "alice")
            #expect(limit == 400)
        }
    }

    @Test("pushed values that do not fit the table are refused naming the column (422), text limits count scalars")
    func badValues() async throws {
        try await withNotesServer(configuration: .init(maximumTextScalars: 10)) { sync, url in
            let (wrongType, message) = try await SyncRawHTTP.push(
                url, user: "alice", key: "v1",
                body:
                    #"{"key":["v"],"operation":"set","changes":{"stars":"many"},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#
            )
            #expect(wrongType == 422 && message.contains("stars"))
            let combining = "e" + String(repeating: "\u{301}", count: 20)
            let (tooLong, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "v2",
                body: #"{"key":["v"],"operation":"set","changes":{"owner_id":"alice","title":""# + combining
                    + #"","body":null,"edited_at":"2026-01-01T00:00:00Z","stars":1},"base":null,"#
                    + #""edited_at":"2026-01-01T00:00:00Z"}"#)
            #expect(tooLong == 422)
            #expect(try await sync.base.repository(ServedNote.self).count() == 0)
        }
    }

    @Test("field times are the server's: a push's edit time, capped at the server's clock, and later than before")
    func fieldTimesAreTheServers() async throws {
        let serverNow = Date(timeIntervalSince1970: 1_900_000_000)  // 2030
        try await withNotesServer(configuration: .init(clock: { serverNow })) { _, url in
            func push(_ key: String, _ changes: String, base: String, at time: String) async throws
                -> SyncProtocol.PushAnswer
            {
                let (status, body) = try await SyncRawHTTP.push(
                    url, user: "alice", key: key,
                    body: #"{"key":["f"],"operation":"set","changes":{"# + changes + #"},"base":"# + base
                        + #","edited_at":""# + time + #""}"#)
                #expect(status == 200, "\(body)")
                return try JSONDecoder().decode(SyncProtocol.PushAnswer.self, from: Data(body.utf8))
            }
            let created = try await push(
                "1", #""owner_id":"alice","title":"t","body":null,"edited_at":"2026-01-01T00:00:00Z","stars":1"#,
                base: "null", at: "2026-01-01T00:00:00Z")
            #expect(created.fieldTimes["title"] == "2026-01-01T00:00:00.000000Z")
            // A client clock in 2100 is trusted only up to the server's.
            let future = try await push("2", #""title":"u""#, base: #"{"title":"t"}"#, at: "2100-01-01T00:00:00Z")
            // (A hybrid clock: never the same time twice, so a microsecond or two past it.)
            let capped = try #require(future.fieldTimes["title"].flatMap(SyncProtocol.date))
            #expect(capped >= serverNow && capped < serverNow + 0.001)
            #expect(future.fieldTimes["stars"] == "2026-01-01T00:00:00.000000Z")
            // An edit dated before the field's time still moves it on (its base was current).
            let past = try await push("3", #""title":"v""#, base: #"{"title":"u"}"#, at: "2020-01-01T00:00:00Z")
            let moved = try #require(past.fieldTimes["title"].flatMap(SyncProtocol.date))
            #expect(moved > serverNow)
        }
    }

    @Test("feed pages and pushes are spans of the caller's trace: table, caller, rows, result")
    func spans() async throws {
        let tracer = TestTracing.bootstrapped
        try await withNotesServer { sync, _ in
            try await sync.store.repository(ServedNote.self).insert([
                note("s1", owner: "alice"), note("s2", owner: "bob"),
            ])
            let alice = NoteUser(id: "alice")
            let root = tracer.startRoot("a sync")
            try await InstrumentationContext.withValue(root.context) {
                _ = try await sync.feed(table: "served_notes", cursor: nil, caller: alice)
                let push =
                    #"{"key":["s1"],"operation":"set","changes":{"title":"t"},"base":{"title":"a note"},"#
                    + #""edited_at":"2026-01-01T00:00:00Z"}"#
                _ = try await sync.push(
                    table: "served_notes", idempotencyKey: "k", body: Data(push.utf8), caller: alice)
                _ = try? await sync.push(
                    table: "served_notes", idempotencyKey: "k", body: Data("{}".utf8), caller: alice)
            }
            root.end()
            let spans = tracer.spans(ofTrace: root)
            let feed = try #require(spans.first { $0.operationName == "sync feed served_notes" })
            #expect(feed.text("depot.sync.caller") == "alice" && feed.text("depot.sync.rows") == "1")
            let pushes = spans.filter { $0.operationName == "sync push served_notes" }
            #expect(pushes.map { $0.text("depot.sync.result") } == ["applied", "refused"])
            #expect(pushes.map { $0.text("http.response.status_code") } == ["200", "400"])
        }
    }

    @Test("ISO 8601 timestamps round-trip every microsecond, and malformed ones are refused")
    func timestamps() throws {
        for micros: Int64 in [
            0, 1, -1, 999_999, -978_307_200_000_000, 1_000_000_000_123_456, 252_423_993_599_000_000,
            -63_113_904_000_000_000, 315_537_897_600_000_000,
        ] {
            let date = Date(microseconds: micros)
            #expect(
                SyncProtocol.date(SyncProtocol.timestamp(date)) == date, "\(micros): \(SyncProtocol.timestamp(date))")
        }
        #expect(SyncProtocol.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
        #expect(SyncProtocol.date("2026-11-27T10:30:00+01:00") == SyncProtocol.date("2026-11-27T09:30:00Z"))
        for bad in [
            "", "2026-02-30T00:00:00Z", "2026-11-27 09:30:00Z", "2026-11-27T09:30:00", "2026-11-27T24:00:00Z",
            "2026-11-27T09:30:00.Z", "2026-11-27T09:30:00.1234567891234Zx",
        ] {
            #expect(SyncProtocol.date(bad) == nil, "\(bad)")
        }
        #expect(SyncProtocol.date("2026-11-27T09:30:00.1234567891234Z") != nil)
    }
}

/// Requests a foreign client would send, without DepotSync.
enum SyncRawHTTP {
    static func push(_ url: URL, user: String, key: String, body: String) async throws -> (Int, String) {
        var request = URLRequest(url: url.appending(path: "sync/served_notes/push"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(user)", forHTTPHeaderField: "Authorization")
        request.setValue(key, forHTTPHeaderField: "Idempotency-Key")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, response) = try await send(request)
        return (response.statusCode, String(decoding: data, as: UTF8.self))
    }

    static func get(_ url: URL, user: String?) async throws -> (Int, String, [String: String]) {
        var request = URLRequest(url: url)
        if let user { request.setValue("Bearer \(user)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await send(request)
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return (response.statusCode, String(decoding: data, as: UTF8.self), headers)
    }

    private static func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.timeoutInterval = 600  // an outer bound, not a speed
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }
}
