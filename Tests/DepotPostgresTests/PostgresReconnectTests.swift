import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// A server of its own (stopping the shared one would fail every other test running meanwhile),
/// started, stopped and started again with `.ci/postgres`.
@Suite(
    "PostgresStore reconnect", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(10)))
struct PostgresReconnectTests {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".ci/postgres").path

    /// Runs `.ci/postgres command root`, returning what it printed.
    ///
    /// Through `system()` on a thread of its own: Foundation's `Process` here left the finished
    /// script a zombie and never called back.
    @discardableResult
    static func cluster(_ command: String, _ root: String) async throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("depot-\(UUID().uuidString).out")
        let line = "/bin/bash '\(script)' \(command) '\(root)' > '\(output.path)' < /dev/null"
        let status = try await offPool { system(line) }
        defer { try? FileManager.default.removeItem(at: output) }
        guard status == 0 else {
            throw DepotError(.connection, ".ci/postgres \(command) failed with status \(status)")
        }
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }

    @Test("a stopped server gives a connection error; once it is back the next call works, data intact")
    func reconnect() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("depot-reconnect-\(UUID().uuidString)")
            .path
        let exports = try await Self.cluster("start", root)
        do {
            try await check(url: try clusterURL(exports), root: root)
        } catch {
            _ = try? await Self.cluster("stop", root)
            throw error
        }
        _ = try await Self.cluster("stop", root)
    }

    /// Runs `call`, trying again while it fails with a connection error, for up to 30 s: the 2 s
    /// connect timeout (short, so that the halted server is noticed promptly) can pass on a
    /// loaded 2-core machine while every suite starts at once, with the server up.
    static func whileStalled<T>(_ call: () async throws -> T) async throws -> T {
        let end = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await call()
            } catch let error as DepotError where error.kind == .connection && ContinuousClock.now < end {
                print("reconnect test: \(error.message); trying again")
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    func clusterURL(_ exports: String) throws -> String {
        try #require(
            exports.split(separator: "\n").first { $0.hasPrefix("export DEPOT_POSTGRES_URL=") }
                .map { String($0.dropFirst("export DEPOT_POSTGRES_URL=".count)) })
    }

    func check(url: String, root: String) async throws {
        var configuration = try PostgresStore.Configuration(url: url)
        configuration.connectTimeout = .seconds(2)
        let store = PostgresStore(configuration: configuration)
        let airports = store.repository(TestAirport.self)
        try await Self.whileStalled { try await airports.insert(TestAirport.sample) }

        try await Self.cluster("halt", root)
        let clock = ContinuousClock()
        let start = clock.now
        let down = await #expect(throws: DepotError.self) { _ = try await airports.count() }
        #expect(down?.kind == .connection)
        #expect(down?.message.contains("127.0.0.1") == true)
        #expect(clock.now - start < .seconds(15))
        let write = await #expect(throws: DepotError.self) { try await airports.upsert(TestAirport.sample[0]) }
        #expect(write?.kind == .connection)

        try await Self.cluster("resume", root)
        // The same store reconnects on its own: no new store, no reopening.
        #expect(try await Self.whileStalled { try await airports.count() } == TestAirport.sample.count)
        try await airports.upsert(TestAirport.sample[0])
        #expect(try await airports.find(TestAirport.sample[0].icao) == TestAirport.sample[0])
        await store.close()
    }
}
