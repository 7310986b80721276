import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTesting
import Foundation
import Testing

@Suite("Live objects of DepotSync", .timeLimit(.minutes(10)))
struct LiveObjectsTests {
    @MainActor
    @Test("LiveSyncStatus follows local edits and sync state from its first read")
    func liveSyncStatus() async throws {
        let store = try SQLiteStore.temporary()
        let engine = SyncEngine(store: store, client: nil, entities: [.entity(ServedNote.self, server: "/sync")])
        let live = LiveSyncStatus(engine)
        #expect(live.status.pendingChanges == 0)
        try await engine.store.repository(ServedNote.self).insert(note("n1", owner: "alice"))
        try await observed { live.status.pendingChanges == 1 }
        _ = try await engine.store.repository(ServedNote.self).remove("n1")
        try await observed { live.status.pendingChanges == 2 }
        #expect(live.status.rejectedChanges == 0 && !live.status.isSyncing)
        live.stop()
        #expect(live.error == nil)
    }

    @Test("LiveResource refreshes by its policy once read, not when made, and shows the stored rows")
    func liveResource() async throws {
        try await withSyncServerOnMain(Self.liveResource(server:serverStore:))
    }

    @MainActor
    static func liveResource(server: URL, serverStore: any Store) async throws {
        do {
            let transport = CountingTransport()
            let loader = ResourceLoader(
                store: try SQLiteStore.temporary(), client: APIClient(baseURL: server, transport: transport))
            let expected = try await serverStore.repository(Airport.self).fetch(
                where: \.country == "NO", orderBy: [.ascending(\.icao)])
            let live = LiveResource(ResourceLoaderTests.norway(.cacheFirst), loader: loader)
            let unread = LiveResource(ResourceLoaderTests.norway(.networkFirst), loader: loader)
            #expect(transport.count("/airports") == 0)
            _ = live.rows
            try await observed { live.rows == expected && !live.refresh.isRefreshing }
            #expect(live.isLoaded && live.refresh.lastRefreshed != nil && live.error == nil)
            #expect(transport.count("/airports") == 1)  // the unread one asked for nothing
            _ = unread
        }
    }
}
