import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

@Suite("SQLiteStore observation", .timeLimit(.minutes(10)))
struct SQLiteObservationTests {
    @Test("a write by another process (the sqlite3 command) reaches an observer")
    func externalProcessWrite() async throws {
        let sqlite3 = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let binary = try #require(sqlite3, "the sqlite3 command is needed (apt-get install sqlite3)")
        let store = try SQLiteStore.temporary()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        var iterator = airports.observe(where: \.country == "PL").makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.icao) == ["EPPO"])

        let process = try ChildProcess.run(
            URL(fileURLWithPath: binary),
            [
                store.path,
                "PRAGMA busy_timeout = 5000; INSERT INTO airports (icao, name, country, elevation, lat, lon) "
                    + "VALUES ('EPWA', 'Warsaw Chopin', 'PL', 362, 52.17, 20.97);",
            ], output: .discard, errors: .discard)
        try await offPool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)

        let next = try await iterator.next()
        #expect(next?.map(\.icao) == ["EPPO", "EPWA"])
    }

    @Test("this store's own commits are not announced twice")
    func ownCommitsOnce() async throws {
        let store = try SQLiteStore.temporary()
        let counting = CountingStore(store)
        let airports = counting.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        var iterator = airports.observe(where: \.country == "PL").makeAsyncIterator()
        _ = try await iterator.next()
        let before = counting.fetchCount
        try await counting.repository(Reading.self).insert(Reading(station: "x", sequence: 1, value: nil))
        try await Task.sleep(for: SQLiteStore.externalChangePollInterval * 4)
        try await airports.upsert(TestAirport(icao: "EPWA", name: "Warsaw", country: "PL"))
        _ = try await iterator.next()
        #expect(counting.fetchCount == before + 1)
    }

    @Test(
        "commits() returns at once while the writer is inside a transaction (it waited for it, on a concurrency thread)"
    )
    func commitsDoesNotWaitForTheWriter() async throws {
        let store = try SQLiteStore.temporary()
        let inside = Signal()
        let release = Signal()
        let writing = Task {
            try await store.transaction { writer in
                _ = try await writer.write(
                    RowBatch(columns: ["station", "sequence", "value"], values: [.text("a"), .integer(1), .null]),
                    into: Reading.schema.table, mode: .insert)
                inside.fire()
                // Held open until commits() has returned: before, commits() waited for this
                // transaction, which waited for it — a deadlock.
                try await release.wait()
            }
        }
        try await inside.wait()
        let commits = store.commits()
        release.fire()
        try await writing.value
        var iterator = commits.makeAsyncIterator()
        try await store.repository(Reading.self).insert(Reading(station: "b", sequence: 2, value: nil))
        #expect(await iterator.next()?.tables == ["readings"])
    }
}
