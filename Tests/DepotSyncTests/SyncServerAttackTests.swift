import Depot
import DepotHTTP
import DepotPostgres
import DepotSQL
import DepotSQLite
import DepotSync
import DepotSyncServer
import DepotTestSupport
import Foundation
import Testing

// What an outside review of DepotSyncServer found, each pinned by a test that failed before its
// fix. Axes: who (another user, a row outside the scope, a read-only table), value extremes (far
// dates, -0.0, dates finer than a microsecond, NUL), time (a prune between two reads), concurrency
// (two stores on one PostgreSQL database: two processes), malformed input (queries, cursors).

/// A task a user may be assigned: a scope over a nullable column.
struct AssignedTask: Entity, Equatable {
    var id: String
    var assignee: String?
    var title: String

    static let schema = Schema<AssignedTask>("assigned_tasks", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.assignee, "assignee")
        Column(\.title, "title")
    }
    .unique(\.title)
}

@Suite("DepotSyncServer under attack")
struct SyncServerAttackTests {
    let alice = NoteUser(id: "alice")

    @Test("a query that is not percent-encoded, or names a cursor twice or empty, answers 400 and the server lives on")
    func malformedQueries() async throws {
        try await withNotesServer { _, url in
            for query in ["cursor=%zz", "cursor=%", "limit=1&limit=2", "cursor=", "cursor=a%00b", "x=%E0%A4%A"] {
                let (status, body, _) = try await SyncRawHTTP.get(
                    try #require(URL(string: url.absoluteString + "/sync/served_notes/feed?" + query)), user: "alice")
                #expect(status == 400, "\(query): \(body)")
            }
            let (alive, _, _) = try await SyncRawHTTP.get(url.appending(path: "sync/served_notes/feed"), user: "alice")
            #expect(alive == 200)
        }
    }

    @Test("dates far out are refused on the wire or written in ISO 8601's expanded form, never trapping")
    func farDates() async throws {
        #expect(SyncProtocol.date("300000-01-01T00:00:00Z") == nil)
        #expect(SyncProtocol.date("+300000-01-01T00:00:00Z") == nil)
        #expect(SyncProtocol.date("999999999999-01-01T00:00:00Z") == nil)
        #expect(SyncProtocol.timestamp(Date(timeIntervalSinceReferenceDate: 9.21e12)).hasPrefix("+"))
        #expect(SyncProtocol.timestamp(Date(timeIntervalSinceReferenceDate: -9.3e12)).hasPrefix("-"))
        // (So far from 2001 a `Date`, a Double, no longer holds every microsecond: whole seconds here.)
        let future = try #require(SyncProtocol.date("+12026-01-02T03:04:05Z"))
        #expect(SyncProtocol.timestamp(future) == "+12026-01-02T03:04:05.000000Z")
        let ancient = try #require(SyncProtocol.date("-0044-03-15T12:00:00Z"))
        #expect(SyncProtocol.timestamp(ancient) == "-0044-03-15T12:00:00.000000Z")
        try await withNotesServer { sync, url in
            let (status, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "far",
                body: #"{"key":["d"],"operation":"set","changes":{"owner_id":"alice","title":"t","body":null,"#
                    + #""edited_at":"300000-01-01T00:00:00Z","stars":1},"base":null,"edited_at":"300000-01-01T00:00:00Z"}"#
            )
            #expect(status == 422)
            #expect(try await sync.base.repository(ServedNote.self).count() == 0)
        }
    }

    @Test("a pushed -0.0 keeps its sign")
    func negativeZero() throws {
        let value = try JSONDecoder().decode(SyncProtocol.Value.self, from: Data("-0.0".utf8))
        guard case .number(let number) = value else {
            Issue.record("-0.0 read as \(value)")
            return
        }
        #expect(number.sign == .minus)
        let minusZero = try JSONDecoder().decode(SyncProtocol.Value.self, from: Data("-0".utf8))
        #expect(minusZero == .number(-0.0))
    }

    @Test("a delete of a row outside the caller's scope answers as for an absent row: nothing deleted, nothing shown")
    func hiddenRowsAreNeverShown() async throws {
        try await withNotesServer { sync, url in
            var secret = note("bobs", owner: "bob", title: "bob's secret")
            secret.body = "the body"
            try await sync.store.repository(ServedNote.self).insert(secret)
            let (status, body) = try await SyncRawHTTP.push(
                url, user: "alice", key: "peek",
                body:
                    #"{"key":["bobs"],"operation":"delete","changes":{},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#
            )
            #expect(status == 200)
            #expect(!body.contains("secret") && !body.contains("the body"), "\(body)")
            let answer = try JSONDecoder().decode(SyncProtocol.PushAnswer.self, from: Data(body.utf8))
            #expect(answer.row == nil && answer.fieldTimes.isEmpty)
            #expect(try await sync.base.repository(ServedNote.self).find("bobs") == secret)
            // Creating a row under bob's key is refused as a row outside alice's scope is.
            let (taken, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "take",
                body: #"{"key":["bobs"],"operation":"set","changes":{"owner_id":"alice","title":"mine","body":null,"#
                    + #""edited_at":"2026-01-01T00:00:00Z","stars":0},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#)
            #expect(taken == 403)
            #expect(try await sync.base.repository(ServedNote.self).find("bobs") == secret)
        }
    }

    @Test("a read-only table answers 403 to a push of any key, hidden, absent or visible")
    func readOnlyAnswersAlike() async throws {
        try await withNotesServer(authorize: false) { sync, url in
            try await sync.store.repository(ServedNote.self).insert([
                note("a", owner: "alice"), note("b", owner: "bob"),
            ])
            for key in ["a", "b", "nobody"] {
                let (status, _) = try await SyncRawHTTP.push(
                    url, user: "alice", key: "k-\(key)",
                    body: #"{"key":["\#(key)"],"operation":"set","changes":{"title":"x"},"base":{"title":"a note"},"#
                        + #""edited_at":"2026-01-01T00:00:00Z"}"#)
                #expect(status == 403, "\(key)")
            }
        }
    }

    @Test("a date written with Date() (finer than a microsecond) does not make every push of its row a conflict")
    func subMicrosecondDates() async throws {
        try await withNotesServer { sync, url in
            var fine = note("fine", owner: "alice")
            fine.editedAt = Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_789)
            try await sync.store.repository(ServedNote.self).insert(fine)
            let alice = try NotesReplica("alice", url: url)
            try await alice.engine.sync()
            #expect(try await alice.notes.remove("fine"))
            let report = try await alice.engine.sync()
            #expect(report.conflicts == 0 && report.pushed == 1)
            #expect(try await sync.base.repository(ServedNote.self).find("fine") == nil)
        }
    }

    @Test("values the store refuses (a unique index) answer 422, kept by the client as a rejection, not 500")
    func storeRefusalsAre422() async throws {
        let store = try SQLiteStore.temporary()
        let sync = try await SyncServer<NoteUser>.open(
            store: store,
            tables: [
                .table(
                    AssignedTask.self, scope: { user in \.assignee == user.id },
                    authorize: { @Sendable write, user in write.row.assignee == user.id })
            ])
        try await sync.store.repository(AssignedTask.self).insert(
            AssignedTask(id: "1", assignee: "alice", title: "taken"))
        let body =
            #"{"key":["2"],"operation":"set","changes":{"assignee":"alice","title":"taken"},"base":null,"#
            + #""edited_at":"2026-01-01T00:00:00Z"}"#
        let error = await #expect(throws: SyncProblem.self) {
            _ = try await sync.push(table: "assigned_tasks", idempotencyKey: "k", body: Data(body.utf8), caller: alice)
        }
        #expect(error?.status == 422)
    }

    @Test(
        "a scope over a nullable column: a row with no assignee is outside every scope, and its changes name it to nobody"
    )
    func unknownIsOutside() async throws {
        let sync = try await SyncServer<NoteUser>.open(
            store: try SQLiteStore.temporary(),
            tables: [
                .table(
                    AssignedTask.self, scope: { user in \.assignee == user.id },
                    authorize: { @Sendable write, user in write.row.assignee == user.id })
            ])
        let tasks = sync.store.repository(AssignedTask.self)
        let copy = try await sync.feed(table: "assigned_tasks", cursor: nil, caller: alice)
        try await tasks.insert(AssignedTask(id: "t", assignee: nil, title: "unassigned"))
        _ = try await tasks.update(where: \.id == "t", set: [.set(\.assignee, to: "bob")])
        let changes = try await sync.feed(table: "assigned_tasks", cursor: copy.cursor, caller: alice)
        #expect(changes.rows.isEmpty && changes.deleted.isEmpty)
    }

    @Test("with a server-side policy, a push whose base names only what it changed is resolved, not dropped")
    func serverPolicyWithPartialBase() async throws {
        try await withNotesServer(conflicts: .clientWins) { sync, url in
            try await sync.store.repository(ServedNote.self).insert(note("p", owner: "alice", title: "server"))
            let (status, body) = try await SyncRawHTTP.push(
                url, user: "alice", key: "partial",
                body: #"{"key":["p"],"operation":"set","changes":{"title":"B"},"base":{"title":"stale"},"#
                    + #""edited_at":"2026-01-01T00:00:00Z"}"#)
            #expect(status == 200, "\(body)")
            #expect(try await sync.base.repository(ServedNote.self).find("p")?.title == "B")
        }
    }

    @Test("a push that changes nothing keeps no idempotency key (the ledger only grows with the log)")
    func noOpPushesKeepNoKey() async throws {
        let store = try SQLiteStore.temporary()
        try await withNotesServer(on: store) { _, url in
            let (created, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "create",
                body: #"{"key":["c"],"operation":"set","changes":{"owner_id":"alice","title":"t","body":null,"#
                    + #""edited_at":"2026-01-01T00:00:00Z","stars":1},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#)
            #expect(created == 200)
            for index in 0..<5 {
                let (status, _) = try await SyncRawHTTP.push(
                    url, user: "alice", key: "nothing \(index)",
                    body: #"{"key":["none"],"operation":"delete","changes":{},"base":null,"#
                        + #""edited_at":"2026-01-01T00:00:00Z"}"#)
                #expect(status == 200)
            }
            let kept = try await store.sql("SELECT count(*) FROM depot_sync_ledger").rows.first?.first
            #expect(kept == .integer(1))
        }
    }

    @Test("a copy cursor whose key does not fit the table's key columns answers 400, not a store error")
    func forgedCopyCursor() async throws {
        try await withNotesServer { sync, _ in
            let head = try await sync.logPosition()
            let key = Data(#"[{"int":5}]"#.utf8).base64EncodedString()
            let error = await #expect(throws: SyncProblem.self) {
                _ = try await sync.feed(
                    table: "served_notes", cursor: "copy:\(head.epoch):0:\(key)", caller: NoteUser(id: "alice"))
            }
            #expect(error?.status == 400)
        }
    }
}

@Suite(
    "DepotSyncServer: two processes on one PostgreSQL database",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"), .timeLimit(.minutes(5)))
struct SyncServerTwoProcessTests {
    @Test("a write waiting on another process's row is logged with the row it really changed")
    func interleavedWritesAreAllLogged() async throws {
        let url = try PostgresEnvironment.scratchURL()
        let first = try PostgresStore(url: url)
        let second = try PostgresStore(url: url)
        try await withCleanup {
            let tables: [SyncTable<NoteUser>] = [.table(ServedNote.self, scope: { user in \.ownerID == user.id })]
            let syncA = try await SyncServer<NoteUser>.open(store: first, tables: tables)
            let syncB = try await SyncServer<NoteUser>.open(store: second, tables: tables)
            let v0 = note("k", owner: "alice", title: "v0")
            try await syncA.store.repository(ServedNote.self).insert(v0)
            let copy = try await syncA.feed(table: "served_notes", cursor: nil, caller: NoteUser(id: "alice"))
            let (updated, signal) = AsyncStream.makeStream(of: Void.self)
            // B changes the row and holds its transaction open; A writes the old value back meanwhile.
            async let b: Void = syncB.store.write { tx in
                _ = try await tx.repository(ServedNote.self).update(where: \.id == "k", set: [.set(\.title, to: "v1")])
                signal.yield()
                try await Task.sleep(for: .milliseconds(300))
            }
            for await _ in updated { break }
            try await syncA.store.repository(ServedNote.self).upsert(v0)
            try await b
            #expect(try await first.repository(ServedNote.self).find("k")?.title == "v0")
            // Both changes are in the log, so a client that saw v0 before them ends with v0 too.
            let log = try await first.sql("SELECT count(*) FROM depot_sync_log WHERE table_name = 'served_notes'")
            #expect(log.rows.first?.first == .integer(3))
            var cursor = copy.cursor
            var rows: [SyncProtocol.Row] = []
            while true {
                let page = try await syncA.feed(table: "served_notes", cursor: cursor, caller: NoteUser(id: "alice"))
                rows += page.rows
                cursor = page.cursor
                if !page.more { break }
            }
            #expect(rows.last?["title"] == .string("v0"))
        } cleanup: {
            try? await first.dropSchema()
            await first.close()
            await second.close()
        }
    }

    @Test("text holding NUL on PostgreSQL answers 422 naming the column, not 500")
    func nulOnPostgres() async throws {
        let store = try PostgresStore(url: try PostgresEnvironment.scratchURL())
        try await withCleanup {
            try await withNotesServer(on: store) { sync, url in
                let (status, body) = try await SyncRawHTTP.push(
                    url, user: "alice", key: "nul",
                    body:
                        #"{"key":["n"],"operation":"set","changes":{"owner_id":"alice","title":"a\u0000b","body":null,"#
                        + #""edited_at":"2026-01-01T00:00:00Z","stars":1},"base":null,"edited_at":"2026-01-01T00:00:00Z"}"#
                )
                #expect(status == 422, "\(body)")
                #expect(body.contains("title"), "\(body)")
                #expect(try await sync.base.repository(ServedNote.self).count() == 0)
            }
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }
}
