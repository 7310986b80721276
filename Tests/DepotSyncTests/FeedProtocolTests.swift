import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// Pulls from feeds that break the feed contract, served by a real HTTP server on 127.0.0.1.
@Suite("Feeds that break the contract")
struct FeedProtocolTests {
    @Test(
        "a feed that answers more pages without moving its cursor, or cycling through cursors, fails the pull by name instead of asking forever",
        arguments: [["stuck"], ["a", "b"]])
    func feedThatDoesNotAdvance(cursors: [String]) async throws {
        let requests = Mutex(0)
        try await withFeedServer { _ in
            let index = requests.withLock { count in
                defer { count += 1 }
                return count
            }
            // Every page says more follow; its cursor goes round `cursors`.
            let cursor = cursors[index % cursors.count]
            return #"{"rows":[],"deleted":[],"cursor":"\#(cursor)","more":true,"expired":false}"#
        } body: { url in
            let store = try SQLiteStore.temporary()
            let engine = SyncEngine.airports(store: store, client: APIClient(baseURL: url, configuration: .patient))
            let error = await #expect(throws: DepotError.self) { try await engine.sync() }
            #expect(error?.kind == .mappingFailed)
            #expect(
                error?.message.contains("the feed airports /sync answered that more changes follow") == true,
                "\(error?.message ?? "")")
            #expect(error?.message.contains("'\(cursors[0])'") == true, "\(error?.message ?? "")")
            // One request per cursor, then the one that came back to a cursor asked from already.
            #expect(requests.withLock { $0 } == cursors.count + 1)
            #expect(try await engine.status().lastError != nil)
        }
    }
}

/// A server on 127.0.0.1 answering `GET /sync/airports/feed` with what `answer` returns for the request's query
/// (200, JSON); stopped after `body`.
func withFeedServer(
    _ answer: @escaping @Sendable (String?) -> String, body: (URL) async throws -> Void
) async throws {
    let router = Router()
    router.get("/sync/airports/feed") { request, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: answer(request.uri.query))))
    }
    let server = try await LocalHTTPServer.start(router)
    try await withCleanup {
        try await body(server.url)
    } cleanup: {
        await server.stop()
    }
}
