import Depot
import DepotHTTP
import Foundation
import Logging
import Testing

@Suite("README: DepotHTTP section", .timeLimit(.minutes(10)))
struct ReadmeSampleTests {
    @Test("The sample syncs airports from the loopback server into a store through the mapper")
    func sampleRuns() async throws {
        let server = try await TestServer.shared()
        let tokens = TokenProvider(token: { TestServer.validToken }, refresh: { _ in TestServer.validToken })
        let client = makeClient(
            baseURL: server.baseURL, tokens: tokens, logger: Logger(label: "readme") { _ in SwiftLogNoOpLogHandler() })
        let store = InMemoryStore()

        #expect(try await syncAirports(in: "NO", client: client, store: store) == 2)
        let stored = try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
        #expect(stored.map(\.icao) == ["ENBR", "ENGM"])
        #expect(stored.last?.elevation == 681)
        #expect(try await syncAirports(in: "XX", client: client, store: store) == 0)
    }
}
