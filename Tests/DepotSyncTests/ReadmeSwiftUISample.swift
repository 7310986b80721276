// swift-format-ignore-file: OrderedImports
import AirportsExample
import DepotTestSupport
import DepotTesting
import Testing

// The README's SwiftUI screen, compiled (on Linux against Tests/SwiftUIShim) and run below.

// readme:begin
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import Foundation
import SwiftUI

/// The pinned notes: the stored rows at once, refreshed from the API when older than five minutes
/// and on pull to refresh, a spinner while it refreshes, and a button that sends the edits waiting.
struct PinnedNotesScreen: View {
    @State private var notes: LiveResource<Note>
    @State private var sync: LiveSyncStatus
    private let engine: SyncEngine

    init(loader: ResourceLoader, engine: SyncEngine) {
        let pinned = Resource(
            NotesAPI.List(pinnedOnly: true), mapper: NoteMapper(), where: \.pinned == true,
            orderBy: [.ascending(\.title)], policy: .staleWhileRevalidate(maxAge: .seconds(300)))
        // Made here, started by the first read in `body`: the copies SwiftUI makes and drops on
        // later updates of the parent are never read, and cost nothing.
        _notes = State(initialValue: LiveResource(pinned, loader: loader))
        _sync = State(initialValue: LiveSyncStatus(engine))
        self.engine = engine
    }

    var body: some View {
        VStack {
            List(notes.rows, id: \.id) { note in
                Text(note.title)
            }
            .refreshable { await notes.refreshNow() }
            .overlay { if notes.refresh.isRefreshing { ProgressView() } }
            Button("Send \(sync.status.pendingChanges) edits") {
                Task { try? await engine.sync() }  // a failure: sync.status.lastError
            }
        }
    }
}

/// At launch: one store, one engine and one loader for the whole app; screens get what they need.
@MainActor
func launch(store: SQLiteStore, api: URL) throws -> (engine: SyncEngine, screen: PinnedNotesScreen) {
    let engine = notesEngine(store: store, client: APIClient(baseURL: api))  // the Notes section's
    let loader = try ResourceLoader(engine: engine)  // refreshes are stored under unsent edits
    return (engine, PinnedNotesScreen(loader: loader, engine: engine))
}
// readme:end

// readme:begin
import Depot
import DepotSQLite
import Foundation

/// At launch: the file in Application Support (the folder is created if missing; the store
/// creates the file, not its folder), then the tables brought to the entities' shape.
func openStore() async throws -> SQLiteStore {
    let folder = try FileManager.default.url(
        for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
    let store = try SQLiteStore(path: folder.appendingPathComponent("airports.sqlite").path)
    let migrations = Migrations([Migration("1 airports", [.createTable(Airport.self)])])
    try await store.open(migrations, entities: [Airport.self])  // before the first read or write
    return store
}
// readme:end

// readme:begin
import Depot
import SwiftUI

/// Norway's airports, live: the list follows every commit that changes them, whoever wrote it.
struct NorwayList: View {
    @State private var norway: LiveQuery<Airport>

    init(store: any Store) {
        // Made here, started by the first read in `body`: the copies SwiftUI makes and drops on
        // later updates of the parent are never read, and cost nothing.
        _norway = State(
            initialValue: LiveQuery(
                store.repository(Airport.self), where: \.country == "NO", orderBy: [.ascending(\.name)]))
    }

    var body: some View {
        List(norway.results, id: \.icao) { airport in
            Text(airport.name)
        }
    }
}
// readme:end

// readme:begin
import DepotSQLite
import SwiftUI

/// The app: the store opened once, at launch; a spinner until it is open, then the list.
struct AirportsApp: App {  // @main in your app target
    @State private var store: SQLiteStore?
    @State private var failure: String?

    var body: some Scene {
        WindowGroup {
            if let store {
                NorwayList(store: store)
            } else if let failure {
                Text(failure)  // a file that cannot be opened or migrated
            } else {
                ProgressView().task {
                    do { store = try await openStore() } catch { failure = "\(error)" }
                }
            }
        }
    }
}
// readme:end

#if os(Linux)  // Rendering is the stand-in's: on Apple platforms the sample compiles against SwiftUI.
    @Suite("README: the SwiftUI screen", .timeLimit(.minutes(10)))
    struct ReadmeSwiftUISampleTests {
        @Test("the screen shows the stored rows, refreshes them from the API, and its button sends the edits waiting")
        func screenShowsRefreshesAndSends() async throws {
            let (server, url) = try await NotesTestServer.start(ReadmeSyncSampleRunTests.notes)
            try await withCleanup {
                try await Self.run(server: server, api: url)
            } cleanup: {
                await server.stop()
            }
        }

        @Test("the live list shows the stored rows and follows a write")
        @MainActor
        func listFollowsWrites() async throws {
            let store = try SQLiteStore.temporary()
            let airports = try await someAirports(["NO"])
            try await store.repository(Airport.self).insert(airports)
            let list = NorwayList(store: store)
            _ = Rendering(list)  // the first render starts the observation
            let names = airports.map(\.name).sorted()
            try await observed { Rendering(list).lines == names }

            var extra = airports[0]
            extra.icao = "ENXX"
            extra.name = "Aaa Test Field"
            try await store.repository(Airport.self).insert(extra)
            try await observed { Rendering(list).lines == [extra.name] + names }
        }

        @MainActor
        static func run(server: NotesTestServer, api: URL) async throws {
            let store = try SQLiteStore.temporary()
            let pinned = ReadmeSyncSampleRunTests.notes.filter(\.pinned).sorted { $0.title < $1.title }
            try #require(pinned.count > 1)
            let (engine, screen) = try launch(store: store, api: api)
            // Nothing stored yet: the first render starts the observation and the refresh.
            _ = Rendering(screen)
            try await observed { Rendering(screen).lines == pinned.map(\.title) + ["[Send 0 edits]"] }

            // A local edit: the row changes at once and the count of edits to send follows.
            let first = pinned[0]
            try await engine.store.repository(Note.self).update(
                where: \.id == first.id, set: [.set(\.title, to: "Aaa \(first.title)")])
            try await observed {
                let lines = Rendering(screen).lines
                return lines.first == "Aaa \(first.title)" && lines.last == "[Send 1 edits]"
            }

            // Pull to refresh: runs the resource's refresh; the edit waiting to be sent stays on top.
            let rendering = Rendering(screen)
            try #require(rendering.refreshActions.count == 1)
            await rendering.refreshActions[0]()
            #expect(Rendering(screen).lines.first == "Aaa \(first.title)")

            // The button: a sync sends the edit; nothing waits any more, and the server has it.
            try #require(rendering.buttonActions.count == 1)
            rendering.buttonActions[0]()
            try await observed { Rendering(screen).lines.last == "[Send 0 edits]" }
            #expect(server.notes.first { $0.id == first.id }?.title == "Aaa \(first.title)")
        }
    }
#endif

// readme:begin
import DepotSync
import SwiftUI

/// The user's notes, live (theirs from every device, once synced), and a button that syncs.
struct SharedNotesList: View {
    @State private var notes: LiveQuery<SharedNote>
    @State private var sync: LiveSyncStatus
    private let engine: SyncEngine

    init(engine: SyncEngine) {
        _notes = State(
            initialValue: LiveQuery(engine.store.repository(SharedNote.self), orderBy: [.ascending(\.title)]))
        _sync = State(initialValue: LiveSyncStatus(engine))
        self.engine = engine
    }

    var body: some View {
        VStack {
            List(notes.results, id: \.id) { note in
                Text(note.title)
            }
            Button("Sync (\(sync.status.pendingChanges) to send)") {
                Task { try? await engine.sync() }  // a failure: sync.status.lastError
            }
        }
    }
}
// readme:end

#if os(Linux)
    @Suite("README: the synced notes list", .timeLimit(.minutes(10)))
    struct SharedNotesListTests {
        @Test("the list shows a note written on this device at once, and another device's after the button's sync")
        func listFollowsLocalWritesAndSyncs() async throws {
            try await withSharedNotesServer(["token-a": "ada"]) { _, api in try await Self.run(api: api) }
        }

        @MainActor
        static func run(api: URL) async throws {
            let engine = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
            let phone = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
            let list = SharedNotesList(engine: engine)
            _ = Rendering(list)
            try await observed { Rendering(list).lines == ["[Sync (0 to send)]"] }

            try await engine.store.repository(SharedNote.self).insert(
                SharedNote(id: UUID(), ownerID: "ada", title: "here", pinned: false))
            try await observed { Rendering(list).lines == ["here", "[Sync (1 to send)]"] }

            try await phone.store.repository(SharedNote.self).insert(
                SharedNote(id: UUID(), ownerID: "ada", title: "from the phone", pinned: false))
            try await phone.sync()
            let rendering = Rendering(list)
            try #require(rendering.buttonActions.count == 1)
            rendering.buttonActions[0]()
            try await observed { Rendering(list).lines == ["from the phone", "here", "[Sync (0 to send)]"] }
        }
    }
#endif

/// The app sample in a process of its own: it opens a file in Application Support.
@Suite("README: the SwiftUI app, in a process of its own")
struct SwiftUIAppSampleTests {
    @Test(
        "the app shows a spinner, opens the store in a new Application Support, then lists what is written",
        .enabled(if: SampleChild.isSupported, "Linux only: the child is this test binary run again"))
    func appOpensItsStoreThenLists() async throws {
        try await SampleChild.run("swiftui-app", filter: "DepotSyncTests.SwiftUIAppChild")
    }
}

/// The child's half.
@Suite("README: the SwiftUI app, the child process's half")
struct SwiftUIAppChild {
    @Test(
        "renders the app before and after its store opens, and follows another connection's writes",
        .enabled(if: SampleChild.requested == "swiftui-app", "runs only in the child SwiftUIAppSampleTests starts"))
    @MainActor
    func rendersTheApp() async throws {
        let folder = try SampleChild.enterScratchFolder()
        let support = try SampleChild.applicationSupport(in: folder)
        #expect(!FileManager.default.fileExists(atPath: support.path), "the sample creates the folder")

        let app = AirportsApp()
        let launching = Rendering(app: app)
        #expect(launching.lines == ["[spinner]"])
        try #require(launching.taskActions.count == 1)
        await launching.taskActions[0]()
        let opened = Rendering(app: app)
        let list = try #require(opened.views.compactMap { $0 as? NorwayList }.first, "\(opened.lines)")

        // Another connection writes the file (as another process would): the list follows.
        let other = try SQLiteStore(path: support.appendingPathComponent("airports.sqlite").path)
        let airports = try await someAirports(["NO"])
        try await other.repository(Airport.self).insert(airports)
        _ = Rendering(list)
        try await observed { Rendering(list).lines == airports.map(\.name).sorted() }

        let reopened = try await openStore()  // a second launch: nothing to migrate, rows kept
        #expect(try await reopened.repository(Airport.self).count() == airports.count)
        SampleChild.passed()
    }
}
