// The README's `serveNotes` serves until a signal: it runs in a child process of its own (see
// SampleChild) on the test server, two devices sync through it, and SIGTERM ends it.
import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("README: serveNotes, in a process of its own")
struct ServeNotesProcessTests {
    @Test(
        "serveNotes serves PORT on PostgreSQL, a note synced from one device reaches the other, SIGTERM stops it",
        .enabled(if: SampleChild.isSupported, "Linux only: the child is this test binary run again"),
        .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"))
    func serveNotesRunsUntilSIGTERM() async throws {
        let url = try PostgresEnvironment.scratchURL()  // under CI=true, a missing server fails here
        try await SampleChild.run(
            "serve-notes", filter: "DepotSyncTests.ServeNotesChild", environment: ["DATABASE_URL": url])
        let store = try PostgresStore(url: url)
        try await withCleanup {
            let titles = try await store.repository(SharedNote.self).fetch().map(\.title)
            #expect(titles == ["written on the laptop"], "the server's database keeps the pushed note")
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }
}

/// The child's half: serves, syncs two devices through the server, stops it with SIGTERM.
@Suite("README: serveNotes, the child process's half")
struct ServeNotesChild {
    @Test(
        "serves, syncs two devices, ends on SIGTERM",
        .enabled(if: SampleChild.requested == "serve-notes", "runs only in the child ServeNotesProcessTests starts"))
    func servesUntilSIGTERM() async throws {
        let environment = ProcessInfo.processInfo.environment
        let databaseURL = try #require(environment["DATABASE_URL"])
        // The port chosen here, just before the server binds it (the sample reads PORT).
        let port = try Loopback.unusedPort()
        setenv("PORT", "\(port)", 1)
        let ended = Mutex(false)
        let server = Task {
            defer { ended.withLock { $0 = true } }
            try await serveNotes(databaseURL: databaseURL, tokens: ["token-a": "ada"])
        }
        // Until it listens (the parent's 300 s bound ends a child that never does).
        while !Loopback.accepts(port) {
            if ended.withLock({ $0 }) {
                try await server.value
                Issue.record("serveNotes returned before it served")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let api = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let laptop = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
        let phone = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "token-a")
        let note = SharedNote(id: UUID(), ownerID: "ada", title: "written on the laptop", pinned: false)
        try await laptop.store.repository(SharedNote.self).insert(note)
        try await laptop.sync()
        try await phone.sync()
        #expect(try await phone.base.repository(SharedNote.self).fetchAll() == [note])
        let stranger = sharedNotesEngine(store: try SQLiteStore.temporary(), api: api, token: "wrong")
        await #expect(throws: (any Error).self, "an unknown token is refused") { try await stranger.sync() }
        kill(getpid(), SIGTERM)  // as a process manager stops it: the service group shuts down gracefully
        try await server.value
        SampleChild.passed()
    }
}
