import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// A server of its own (``ThrowawayCluster``), started, stopped and started again.
@Suite(
    "PostgresStore reconnect", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresReconnectTests {
    @Test("a stopped server gives a connection error; once it is back the next call works, data intact")
    func reconnect() async throws {
        try await ThrowawayCluster.with { cluster in try await check(cluster) }
    }

    /// Runs `call`, trying again while it fails with a connection error, for up to 2 minutes (a
    /// guard against a server that never comes back, not a bound on speed): a short connect
    /// timeout (so that the halted server is noticed promptly) can pass on a loaded 2-core
    /// machine while every suite starts at once, with the server up.
    static func whileStalled<T>(_ call: () async throws -> T) async throws -> T {
        let end = ContinuousClock.now + .seconds(120)
        while true {
            do {
                return try await call()
            } catch let error as DepotError where error.kind == .connection && ContinuousClock.now < end {
                print("reconnect test: \(error.message); trying again")
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    func check(_ cluster: ThrowawayCluster) async throws {
        var configuration = try PostgresStore.Configuration(url: cluster.url)
        configuration.connectTimeout = .seconds(2)
        let store = PostgresStore(configuration: configuration)
        let airports = store.repository(TestAirport.self)
        try await Self.whileStalled { try await airports.insert(TestAirport.sample) }

        try await cluster.halt()
        // That the calls end is the suite's time limit's to check (no wall-clock bound: loaded CI
        // runs have waited over a minute for a core).
        let down = await #expect(throws: DepotError.self) { _ = try await airports.count() }
        #expect(down?.kind == .connection)
        #expect(down?.message.contains("127.0.0.1") == true)
        let write = await #expect(throws: DepotError.self) { try await airports.upsert(TestAirport.sample[0]) }
        #expect(write?.kind == .connection)

        try await cluster.resume()
        // The same store reconnects on its own: no new store, no reopening.
        #expect(try await Self.whileStalled { try await airports.count() } == TestAirport.sample.count)
        try await airports.upsert(TestAirport.sample[0])
        #expect(try await airports.find(TestAirport.sample[0].icao) == TestAirport.sample[0])
        await store.close()
    }
}
