// swift-format-ignore-file: OrderedImports
import DepotTesting
import Testing

// The README's SwiftUI screen, compiled (on Linux against Tests/SwiftUIShim) and run below.

// readme:begin
import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import Foundation
import SwiftUI

/// Norway's airports: the stored rows at once, refreshed from the API when older than five
/// minutes and on pull to refresh, a spinner while it refreshes, and how many edits wait to be sent.
struct NorwayScreen: View {
    @State private var airports: LiveResource<Airport>
    @State private var sync: LiveSyncStatus

    init(loader: ResourceLoader, engine: SyncEngine) {
        let norway = Resource(
            AirportsAPI.List(country: "NO", limit: 1_000), mapper: AirportRecordMapper(),
            where: \.country == "NO", orderBy: [.ascending(\.name)],
            policy: .staleWhileRevalidate(maxAge: .seconds(300)))
        // Made here, started by the first read in `body`: the copies SwiftUI makes and drops on
        // later updates of the parent are never read, and cost nothing.
        _airports = State(initialValue: LiveResource(norway, loader: loader))
        _sync = State(initialValue: LiveSyncStatus(engine))
    }

    var body: some View {
        VStack {
            List(airports.rows, id: \.icao) { airport in
                Text(airport.name)
            }
            .refreshable { await airports.refreshNow() }
            .overlay { if airports.refresh.isRefreshing { ProgressView() } }
            Text("\(sync.status.pendingChanges) edits to send")
        }
    }
}

/// At launch: one store and one engine for the whole app; screens get what they need.
@MainActor
func launch(store: SQLiteStore, api: URL) throws -> (engine: SyncEngine, screen: NorwayScreen) {
    let engine = SyncEngine.airports(store: store, client: APIClient(baseURL: api), country: "NO")
    let loader = try ResourceLoader(engine: engine)  // refreshes are stored under unsent edits
    return (engine, NorwayScreen(loader: loader, engine: engine))
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

#if os(Linux)  // Rendering is the stand-in's: on Apple platforms the sample compiles against SwiftUI.
    @Suite("README: the SwiftUI screen", .timeLimit(.minutes(10)))
    struct ReadmeSwiftUISampleTests {
        @Test("the screen shows the stored rows, refreshes them from the API, and counts the edits waiting")
        func screenShowsRefreshesAndCounts() async throws {
            try await withSyncServerOnMain(Self.run(api:serverStore:))
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
        static func run(api: URL, serverStore: any Store) async throws {
            let store = try SQLiteStore.temporary()
            let served = try await serverStore.repository(Airport.self).fetch(
                where: \.country == "NO", orderBy: [.ascending(\.name)])
            try #require(served.count > 1)
            let (engine, screen) = try launch(store: store, api: api)
            // Nothing stored yet: the first render starts the observation and the refresh.
            _ = Rendering(screen)
            try await observed { Rendering(screen).lines == served.map(\.name) + ["0 edits to send"] }

            // A local edit: the row changes at once and the count of edits to send follows.
            let first = served[0]
            try await engine.store.repository(Airport.self).update(
                where: \.icao == first.icao, set: [.set(\.name, to: "Aaa \(first.name)")])
            try await observed {
                let lines = Rendering(screen).lines
                return lines.first == "Aaa \(first.name)" && lines.last == "1 edits to send"
            }

            // Pull to refresh: runs the resource's refresh; the edit waiting to be sent stays on top.
            let rendering = Rendering(screen)
            try #require(rendering.refreshActions.count == 1)
            await rendering.refreshActions[0]()
            #expect(Rendering(screen).lines.first == "Aaa \(first.name)")
        }
    }
#endif
