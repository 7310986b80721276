import Depot
import DepotSQLite
import DepotSync
import DepotSyncServer
import Foundation
import Testing

@Suite("DepotSyncServer: row versions")
struct SyncRowVersionTests {
    @Test("a column changed and changed back on the server since the client saw the row is a conflict (no ABA)")
    func changedBackIsAConflict() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url)
            let notes = sync.store.repository(ServedNote.self)
            try await notes.insert(note("n1", owner: "alice", title: "A"))
            try await alice.engine.sync()
            _ = try await notes.update(where: \.id == "n1", set: [.set(\.title, to: "B")])
            _ = try await notes.update(where: \.id == "n1", set: [.set(\.title, to: "A")])
            // Offline, alice edits the title she saw; the server's row has the same values but
            // is not the row she saw: the server's row wins (.serverWins), as for any conflict.
            _ = try await alice.notes.update(where: \.id == "n1", set: [.set(\.title, to: "C")])
            let report = try await alice.engine.sync()
            #expect(report.conflicts == 1 && report.pushed == 0 && report.resolvedByServer == 1)
            #expect(try await sync.base.repository(ServedNote.self).find("n1")?.title == "A")
            #expect(try await alice.all().first?.title == "A")
        }
    }

    @Test("a client's own pushes, one after another on one row, and after a pull, conflict with nothing")
    func ownPushesDoNotConflict() async throws {
        try await withNotesServer { sync, url in
            let alice = try NotesReplica("alice", url: url)
            let phone = try NotesReplica("alice", url: url)
            try await sync.store.repository(ServedNote.self).insert(note("n1", owner: "alice", title: "A"))
            try await alice.engine.sync()
            try await phone.engine.sync()
            for title in ["B", "C", "D"] {
                _ = try await alice.notes.update(where: \.id == "n1", set: [.set(\.title, to: title)])
            }
            var report = try await alice.engine.sync()
            #expect(report.pushed == 3 && report.conflicts == 0)
            _ = try await alice.notes.update(where: \.id == "n1", set: [.set(\.stars, to: 5)])
            report = try await alice.engine.sync()
            #expect(report.pushed == 1 && report.conflicts == 0)
            // The phone pulls alice's edits, then edits on top of them: no conflict either.
            try await phone.engine.pull()
            _ = try await phone.notes.update(where: \.id == "n1", set: [.set(\.title, to: "E")])
            report = try await phone.engine.sync()
            #expect(report.pushed == 1 && report.conflicts == 0)
            #expect(
                try await sync.base.repository(ServedNote.self).find("n1").map { ($0.title, $0.stars) } ?? ("", 0) == (
                    "E", 5
                ))
        }
    }

    @Test("feed pages carry each row's version; a row no logged write changed has version 0")
    func feedVersions() async throws {
        try await withNotesServer { sync, url in
            // Written around the sync server's store: not logged, no version.
            try await sync.base.repository(ServedNote.self).insert(note("quiet", owner: "alice"))
            try await sync.store.repository(ServedNote.self).insert(note("logged", owner: "alice"))
            let alice = NoteUser(id: "alice")
            let copy = try await sync.feed(table: "served_notes", cursor: nil, caller: alice)
            let versions = Dictionary(
                uniqueKeysWithValues: zip(copy.rows.map { "\($0["id"] ?? .null)" }, copy.versions ?? []))
            #expect(copy.versions?.count == 2)
            #expect(versions.values.contains(0))
            #expect(versions.values.contains { $0 > 0 })
            _ = try await sync.store.repository(ServedNote.self).update(
                where: \.id == "quiet", set: [.set(\.title, to: "now logged")])
            let changes = try await sync.feed(table: "served_notes", cursor: copy.cursor, caller: alice)
            #expect(changes.rows.count == 1)
            #expect((changes.versions?.first ?? 0) > (versions.values.max() ?? 0))
        }
    }

    @Test("the same push sent again with another base version is the same request: its stored answer")
    func baseVersionIsNotPartOfTheRequest() async throws {
        try await withNotesServer { sync, url in
            try await sync.store.repository(ServedNote.self).insert(note("n1", owner: "alice", title: "A"))
            func body(_ version: Int?) -> String {
                #"{"key":["n1"],"operation":"set","changes":{"title":"B"},"base":{"title":"A"},"#
                    + #""edited_at":"2026-01-01T00:00:00Z""# + (version.map { #","base_version":\#($0)"# } ?? "") + "}"
            }
            let copy = try await sync.feed(table: "served_notes", cursor: nil, caller: NoteUser(id: "alice"))
            let seen = try #require(copy.versions?.first)
            let (first, answer) = try await SyncRawHTTP.push(url, user: "alice", key: "k1", body: body(seen))
            #expect(first == 200)
            let (again, repeated) = try await SyncRawHTTP.push(url, user: "alice", key: "k1", body: body(seen + 99))
            #expect(again == 200 && repeated == answer)
            // A foreign client that sends no version is compared by values only.
            _ = try await sync.store.repository(ServedNote.self).update(
                where: \.id == "n1", set: [.set(\.title, to: "X")])
            _ = try await sync.store.repository(ServedNote.self).update(
                where: \.id == "n1", set: [.set(\.title, to: "B")])
            let plain =
                #"{"key":["n1"],"operation":"set","changes":{"title":"C"},"base":{"title":"B"},"#
                + #""edited_at":"2026-01-01T00:00:00Z"}"#
            let (status, _) = try await SyncRawHTTP.push(url, user: "alice", key: "k2", body: plain)
            #expect(status == 200)
            let (stale, text) = try await SyncRawHTTP.push(
                url, user: "alice", key: "k3",
                body: #"{"key":["n1"],"operation":"set","changes":{"title":"D"},"base":{"title":"C"},"#
                    + #""edited_at":"2026-01-01T00:00:00Z","base_version":\#(seen)}"#)
            #expect(stale == 409 && text.contains("version"))
            // A column the push does not change may have moved on: merged, not a conflict.
            let (merged, _) = try await SyncRawHTTP.push(
                url, user: "alice", key: "k4",
                body: #"{"key":["n1"],"operation":"set","changes":{"stars":1},"base":{"stars":0},"#
                    + #""edited_at":"2026-01-01T00:00:00Z","base_version":\#(seen)}"#)
            #expect(merged == 200)
        }
    }
}
