import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotSyncHummingbird
import DepotSyncServer
import DepotTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// A folder of notes; removing one is denied while it holds notes.
struct SyncFolder: Entity, Equatable {
    var id: String
    var ownerID: String
    var name: String

    static let schema = Schema<SyncFolder>("sync_folders", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.ownerID, "owner_id")
        Column(\.name, "name")
    }
    static let notes = ToMany(SyncFolderNote.folder)
    static var relations: [any Relation<SyncFolder>] { [notes] }
}

/// A note in a folder.
struct SyncFolderNote: Entity, Equatable {
    var id: String
    var folderID: String
    var ownerID: String
    var title: String

    static let schema = Schema<SyncFolderNote>("sync_folder_notes", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.folderID, "folder_id")
        Column(\.ownerID, "owner_id")
        Column(\.title, "title")
    }
    static let folder = ToOne<SyncFolderNote, SyncFolder>(\.folderID, onDelete: .deny)
    static var relations: [any Relation<SyncFolderNote>] { [folder] }
}

/// A shelf of books; removing one removes its books.
struct SyncShelf: Entity, Equatable {
    var id: String
    var ownerID: String

    static let schema = Schema<SyncShelf>("sync_shelves", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.ownerID, "owner_id")
    }
    static let books = ToMany(SyncBook.shelf)
    static var relations: [any Relation<SyncShelf>] { [books] }
}

/// A book on a shelf.
struct SyncBook: Entity, Equatable {
    var id: String
    var shelfID: String
    var ownerID: String

    static let schema = Schema<SyncBook>("sync_books", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.shelfID, "shelf_id")
        Column(\.ownerID, "owner_id")
    }
    static let shelf = ToOne<SyncBook, SyncShelf>(\.shelfID, onDelete: .cascade)
    static var relations: [any Relation<SyncBook>] { [shelf] }
}

/// Runs `action` once, before the first request for a path containing `marker` goes out.
private final class BeforeFirstRequest: Middleware {
    let marker: String
    let action: @Sendable () async throws -> Void
    let done = Mutex(false)

    init(marker: String, action: @escaping @Sendable () async throws -> Void) {
        self.marker = marker
        self.action = action
    }

    func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
    {
        let first =
            context.path.contains(marker)
            && done.withLock { done in
                defer { done = true }
                return !done
            }
        if first { try await action() }
        return try await next(request)
    }
}

/// A sync server of folders, notes, shelves and books on a fresh SQLite file: each user sees and
/// pushes their own rows.
private func withFoldersServer(_ body: (SyncServer<NoteUser>, URL) async throws -> Void) async throws {
    let sync = try await SyncServer<NoteUser>.open(
        store: try SQLiteStore.temporary(),
        tables: [
            .table(
                SyncFolder.self, scope: { user in \.ownerID == user.id },
                authorize: { @Sendable write, user in write.row.ownerID == user.id }),
            .table(
                SyncFolderNote.self, scope: { user in \.ownerID == user.id },
                authorize: { @Sendable write, user in write.row.ownerID == user.id }),
            .table(
                SyncShelf.self, scope: { user in \.ownerID == user.id },
                authorize: { @Sendable write, user in write.row.ownerID == user.id }),
            .table(
                SyncBook.self, scope: { user in \.ownerID == user.id },
                authorize: { @Sendable write, user in write.row.ownerID == user.id }),
        ])
    try await serving(sync) { url in try await body(sync, url) }
}

/// A replica syncing the children's tables before their parents' (the order they are declared
/// in must not matter).
private struct FoldersReplica {
    let store: SQLiteStore
    let engine: SyncEngine

    init(_ user: String, url: URL, middleware: [any Middleware] = []) throws {
        store = try SQLiteStore.temporary()
        var configuration = APIClient.Configuration.patient
        configuration.headers["Authorization"] = "Bearer \(user)"
        configuration.middleware = middleware
        engine = SyncEngine(
            store: store, client: APIClient(baseURL: url, configuration: configuration),
            entities: [
                .entity(SyncBook.self, server: "/sync", pageSize: 2),
                .entity(SyncFolderNote.self, server: "/sync", pageSize: 2),
                .entity(SyncShelf.self, server: "/sync", pageSize: 2),
                .entity(SyncFolder.self, server: "/sync", pageSize: 2),
            ])
    }

    func ids<Root: Entity>(_ type: Root.Type, _ id: KeyPath<Root, String> & Sendable) async throws -> [String] {
        try await store.repository(Root.self).fetch().map { $0[keyPath: id] }.sorted()
    }
}

@Suite("DepotSync: related entities")
struct SyncRelationsTests {
    @Test("a pull stores parents before their children, whatever order the entities are declared in")
    func parentsBeforeChildren() async throws {
        try await withFoldersServer { sync, url in
            try await sync.store.repository(SyncFolder.self).insert([
                SyncFolder(id: "f1", ownerID: "alice", name: "Work"),
                SyncFolder(id: "f2", ownerID: "alice", name: "Home"),
            ])
            try await sync.store.repository(SyncFolderNote.self).insert(
                (1...5).map {
                    SyncFolderNote(id: "n\($0)", folderID: $0 < 4 ? "f1" : "f2", ownerID: "alice", title: "")
                })
            let alice = try FoldersReplica("alice", url: url)
            try await alice.engine.sync()
            #expect(try await alice.ids(SyncFolder.self, \.id) == ["f1", "f2"])
            #expect(try await alice.ids(SyncFolderNote.self, \.id) == ["n1", "n2", "n3", "n4", "n5"])
            // The server empties a folder, then removes it (denied the other way round): the
            // client takes the removal in one sync, with no local rule in the way.
            _ = try await sync.store.repository(SyncFolderNote.self).remove(where: \.folderID == "f1")
            _ = try await sync.store.repository(SyncFolder.self).remove("f1")
            try await alice.engine.sync()
            #expect(try await alice.ids(SyncFolder.self, \.id) == ["f2"])
            #expect(try await alice.ids(SyncFolderNote.self, \.id) == ["n4", "n5"])
        }
    }

    @Test("a child pulled before its parent (written between the two feeds' pages) does not stop the sync")
    func childAheadOfItsParent() async throws {
        try await withFoldersServer { sync, url in
            try await sync.store.repository(SyncFolder.self).insert(SyncFolder(id: "f1", ownerID: "alice", name: ""))
            // Once the folders' feed was read, and before the notes' is: a new folder and a note in it.
            let race = BeforeFirstRequest(marker: "sync_folder_notes/feed") {
                try await sync.store.write { tx in
                    try await tx.repository(SyncFolder.self).insert(SyncFolder(id: "f9", ownerID: "alice", name: ""))
                    try await tx.repository(SyncFolderNote.self).insert(
                        SyncFolderNote(id: "n9", folderID: "f9", ownerID: "alice", title: ""))
                }
            }
            let alice = try FoldersReplica("alice", url: url, middleware: [race])
            try await alice.engine.sync()
            #expect(try await alice.ids(SyncFolderNote.self, \.id) == ["n9"])
            #expect(try await alice.ids(SyncFolder.self, \.id) == ["f1"])
            try await alice.engine.sync()
            #expect(try await alice.ids(SyncFolder.self, \.id) == ["f1", "f9"])
        }
    }

    @Test("a child whose parent is outside the caller's scope is stored: the server checked the reference")
    func parentOutsideTheScope() async throws {
        try await withFoldersServer { sync, url in
            try await sync.store.repository(SyncFolder.self).insert(SyncFolder(id: "shared", ownerID: "bob", name: ""))
            try await sync.store.repository(SyncFolderNote.self).insert(
                SyncFolderNote(id: "mine", folderID: "shared", ownerID: "alice", title: ""))
            let alice = try FoldersReplica("alice", url: url)
            try await alice.engine.sync()
            #expect(try await alice.ids(SyncFolderNote.self, \.id) == ["mine"])
            #expect(try await alice.ids(SyncFolder.self, \.id).isEmpty)
        }
    }

    @Test("offline-made parents and children push parents first and removals children first (a deny rule holds)")
    func pushOrderFollowsTheEdits() async throws {
        try await withFoldersServer { sync, url in
            let alice = try FoldersReplica("alice", url: url)
            let folders = alice.engine.store.repository(SyncFolder.self)
            let notes = alice.engine.store.repository(SyncFolderNote.self)
            try await folders.insert(SyncFolder(id: "f3", ownerID: "alice", name: ""))
            try await notes.insert([
                SyncFolderNote(id: "n3", folderID: "f3", ownerID: "alice", title: ""),
                SyncFolderNote(id: "n4", folderID: "f3", ownerID: "alice", title: ""),
            ])
            var report = try await alice.engine.sync()
            #expect(report.pushed == 3 && report.rejected == 0)
            #expect(try await sync.base.repository(SyncFolderNote.self).count(where: \.folderID == "f3") == 2)
            _ = try await notes.remove(where: \.folderID == "f3")
            _ = try await folders.remove("f3")
            report = try await alice.engine.sync()
            #expect(report.pushed == 3 && report.rejected == 0)
            #expect(try await sync.base.repository(SyncFolder.self).count() == 0)
            #expect(try await sync.base.repository(SyncFolderNote.self).count() == 0)
        }
    }

    @Test("a local cascade pushes each removed child, then the parent")
    func cascadeReachesTheServer() async throws {
        try await withFoldersServer { sync, url in
            let alice = try FoldersReplica("alice", url: url)
            try await alice.engine.store.repository(SyncShelf.self).insert(SyncShelf(id: "s1", ownerID: "alice"))
            try await alice.engine.store.repository(SyncBook.self).insert(
                (1...3).map { SyncBook(id: "b\($0)", shelfID: "s1", ownerID: "alice") })
            try await alice.engine.sync()
            #expect(try await sync.base.repository(SyncBook.self).count() == 3)
            _ = try await alice.engine.store.repository(SyncShelf.self).remove("s1")
            let pending = try await alice.engine.pendingChanges()
            #expect(pending.map(\.table) == ["sync_books", "sync_books", "sync_books", "sync_shelves"])
            #expect(pending.allSatisfy { $0.isDelete })
            let report = try await alice.engine.sync()
            #expect(report.pushed == 4 && report.rejected == 0)
            #expect(try await sync.base.repository(SyncShelf.self).count() == 0)
            #expect(try await sync.base.repository(SyncBook.self).count() == 0)
        }
    }

    @Test("a child made offline in a parent the server removed is refused (422) and kept; the rest is pushed")
    func childOfARemovedParent() async throws {
        try await withFoldersServer { sync, url in
            let alice = try FoldersReplica("alice", url: url)
            try await alice.engine.store.repository(SyncFolder.self).insert([
                SyncFolder(id: "gone", ownerID: "alice", name: ""), SyncFolder(id: "kept", ownerID: "alice", name: ""),
            ])
            try await alice.engine.sync()
            _ = try await sync.store.repository(SyncFolder.self).remove("gone")
            let notes = alice.engine.store.repository(SyncFolderNote.self)
            try await notes.insert(SyncFolderNote(id: "orphan", folderID: "gone", ownerID: "alice", title: ""))
            try await notes.insert(SyncFolderNote(id: "fine", folderID: "kept", ownerID: "alice", title: ""))
            let report = try await alice.engine.sync()
            #expect(report.pushed == 1 && report.rejected == 1)
            let rejected = try await alice.engine.rejectedChanges()
            #expect(rejected.map(\.key) == [[.text("orphan")]])
            #expect(rejected.first?.rejection?.status == 422)
            #expect(rejected.first?.rejection?.message.contains("gone") == true)
            #expect(try await sync.base.repository(SyncFolderNote.self).fetch().map(\.id) == ["fine"])
        }
    }

    @Test("a waiting edit naming a parent the server removed stays shown over pulled rows; the pull goes on")
    func waitingEditOfARemovedParent() async throws {
        try await withFoldersServer { sync, url in
            let alice = try FoldersReplica("alice", url: url)
            try await alice.engine.store.repository(SyncFolder.self).insert([
                SyncFolder(id: "f1", ownerID: "alice", name: ""), SyncFolder(id: "f2", ownerID: "alice", name: ""),
            ])
            try await alice.engine.store.repository(SyncFolderNote.self).insert(
                SyncFolderNote(id: "n1", folderID: "f1", ownerID: "alice", title: "old"))
            try await alice.engine.sync()
            // Offline, alice moves the note into f2; meanwhile the server removes f2 and retitles it.
            _ = try await alice.engine.store.repository(SyncFolderNote.self).update(
                where: \.id == "n1", set: [.set(\.folderID, to: "f2")])
            _ = try await sync.store.repository(SyncFolder.self).remove("f2")
            _ = try await sync.store.repository(SyncFolderNote.self).update(
                where: \.id == "n1", set: [.set(\.title, to: "new")])
            let report = try await alice.engine.sync()
            #expect(report.rejected == 1)
            let local = try await alice.store.repository(SyncFolderNote.self).find("n1")
            #expect(local?.title == "new")
            #expect(local?.folderID == "f2")  // the refused edit shows until the app acts on it
            let rejected = try await alice.engine.rejectedChanges()
            #expect(rejected.count == 1)
            for change in rejected { try await alice.engine.discard(change) }
            #expect(try await alice.store.repository(SyncFolderNote.self).find("n1")?.folderID == "f1")
            try await alice.engine.sync()
            #expect(try await alice.ids(SyncFolder.self, \.id) == ["f1"])
        }
    }
}
