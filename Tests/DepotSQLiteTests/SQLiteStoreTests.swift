import Depot
import DepotSQLite
import DepotTesting
import Foundation
import GRDB
import Testing

/// A fresh directory for one test's database files.
func scratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("depot-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

@Suite("SQLiteStore", .timeLimit(.minutes(10)))
struct SQLiteStoreTests {
    @Test("values survive closing and reopening the file, every type exact")
    func reopen() async throws {
        let path = try scratchDirectory().appendingPathComponent("db.sqlite").path
        do {
            let store = try SQLiteStore(path: path)
            try await store.repository(AllTypes.self).insert(AllTypes.extremes)
        }
        let reopened = try SQLiteStore(path: path)
        #expect(try await reopened.repository(AllTypes.self).fetchAll() == AllTypes.extremes)
    }

    @Test("a temporary store closes its connections, then removes its folder, when released")
    func temporaryStoreCleansUp() async throws {
        var folder = ""
        do {
            let store = try SQLiteStore.temporary()
            folder = (store.path as NSString).deletingLastPathComponent
            try await store.repository(TestAirport.self).insert(TestAirport.sample)
            #expect(try await store.repository(TestAirport.self).count() == TestAirport.sample.count)
            #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
        }
        // Released: nothing is left, not even a WAL recreated by a checkpoint after the removal.
        #expect(await eventually { !FileManager.default.fileExists(atPath: folder) }, "\(folder)")
    }

    @Test("a stored value that does not decode names entity column, table, key and what it holds")
    func decodingError() async throws {
        let store = try SQLiteStore.temporary()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE airports SET elevation = 'abc' WHERE icao = 'ENGM'")
        }
        let error = await #expect(throws: DepotError.self) { _ = try await airports.fetchAll() }
        #expect(error?.kind == .decodingFailed)
        #expect(error?.column == "elevation")
        #expect(error?.message == "column elevation of airports row 'ENGM' holds TEXT 'abc', expected Double")
        #expect(try await airports.count() == 10)
    }

    @Test("an integer out of its Swift type's range is a decoding error, not a wrap-around")
    func outOfRange() async throws {
        let store = try SQLiteStore.temporary()
        let all = store.repository(AllTypes.self)
        try await all.insert(AllTypes.extremes)
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in try db.execute(sql: "UPDATE all_types SET int8 = 300 WHERE id = 2") }
        let error = await #expect(throws: DepotError.self) { _ = try await all.find(2) }
        #expect(error?.message == "column int8 of all_types row 2 holds INTEGER 300, expected Int8")
    }

    @Test("a failed batch leaves the file unchanged, seen from another connection")
    func failedBatchLeavesFileUnchanged() async throws {
        let store = try SQLiteStore.temporary()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        var batch = (0..<500).map { TestAirport(icao: "N\($0)", name: "new", country: "XX") }
        batch.insert(TestAirport.sample[3], at: 250)
        let error = await #expect(throws: DepotError.self) { try await airports.insert(batch) }
        #expect(error?.message == "airports: a row with key 'ENZZ' already exists")
        let other = try SQLiteStore(path: store.path)
        #expect(try await other.repository(TestAirport.self).count() == 10)
        let queue = try DatabaseQueue(path: store.path)
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM airports") } == 10)
    }

    @Test("a NOT NULL violation names the table, key and column")
    func notNullViolation() async throws {
        let store = try SQLiteStore.temporary()
        let table = TestAirport.schema.table
        let error = await #expect(throws: DepotError.self) {
            try await store.transaction { writer in
                try await writer.write(
                    RowBatch(columns: ["icao", "country"], values: [.text("XXXX"), .text("NO")]), into: table,
                    mode: .upsert)
            }
        }
        #expect(error?.kind == .constraintViolation)
        #expect(error?.message == "airports row 'XXXX': NULL in NOT NULL column name")
    }

    @Test("a file that is not a database is reported with its path")
    func notADatabase() throws {
        let path = try scratchDirectory().appendingPathComponent("notes.sqlite").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DepotError.self) { _ = try SQLiteStore(path: path) }
        #expect(error?.kind == .storage)
        #expect(error?.message == "'\(path)' is not a SQLite database")
    }

    @Test("a path that cannot be opened is reported with its path")
    func cannotOpen() throws {
        let path = "/nonexistent-\(UUID().uuidString)/db.sqlite"
        let error = #expect(throws: DepotError.self) { _ = try SQLiteStore(path: path) }
        #expect(error?.kind == .storage)
        #expect(error?.message.contains(path) == true)
    }

    @Test("a table that differs from the entity is reported, listing each difference")
    func schemaMismatch() async throws {
        let store = try SQLiteStore.temporary()
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            try db.execute(
                sql: "CREATE TABLE airports (icao TEXT NOT NULL PRIMARY KEY, name INTEGER, country TEXT NOT NULL)")
        }
        let error = await #expect(throws: DepotError.self) {
            _ = try await store.repository(TestAirport.self).count()
        }
        #expect(error?.kind == .schemaMismatch)
        let message = error?.message ?? ""
        #expect(message.contains("table 'airports' does not match TestAirport"))
        #expect(message.contains("column iata: expected TEXT, found no column"))
        #expect(message.contains("column name: expected type TEXT, found INTEGER"))
        #expect(message.contains("column name: expected NOT NULL, found NULL allowed"))
    }

    @Test("the schema's indexes are created with the table; a table without them is reported as drift")
    func schemaIndexes() async throws {
        let store = try SQLiteStore.temporary()
        try await store.repository(TestAccount.self).insert(TestAccount.sample)
        let queue = try DatabaseQueue(path: store.path)
        let indexes = try await queue.read { db in
            try Row.fetchAll(
                db, sql: "SELECT name, \"unique\" FROM pragma_index_list('test_accounts') WHERE origin = 'c'"
            )
            .map { "\($0[0] as String):\($0[1] as Int)" }.sorted()
        }
        #expect(indexes == ["test_accounts_country_idx:0", "test_accounts_email_key:1", "test_accounts_team_handle:1"])

        let bare = try SQLiteStore.temporary()
        let bareQueue = try DatabaseQueue(path: bare.path)
        try await bareQueue.write { db in
            try db.execute(
                sql: "CREATE TABLE test_accounts (id INTEGER NOT NULL, email TEXT, country TEXT NOT NULL, "
                    + "handle TEXT NOT NULL, team TEXT, PRIMARY KEY (id)); "
                    + "CREATE INDEX test_accounts_email_key ON test_accounts (email)")
        }
        let error = await #expect(throws: DepotError.self) { try await bare.repository(TestAccount.self).count() }
        #expect(error?.kind == .schemaMismatch)
        let message = error?.message ?? ""
        #expect(message.contains("index test_accounts_country_idx: expected (country), found no index"), "\(message)")
        #expect(message.contains("index test_accounts_email_key: expected unique (email), found (email)"), "\(message)")
    }

    @Test("readers run while a writer commits, and see only whole transactions")
    func concurrentReadersAndWriter() async throws {
        let store = try SQLiteStore.temporary()
        let airports = store.repository(TestAirport.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<40 {
                    let batch = (0..<50).map { TestAirport(icao: "R\(round)_\($0)", name: "n", country: "C") }
                    try await airports.insert(batch)
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    var last = 0
                    for _ in 0..<60 {
                        let count = try await airports.count()
                        #expect(count % 50 == 0)
                        #expect(count >= last)
                        last = count
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await airports.count() == 2000)
    }

    @Test("two stores on one file (as two processes would) write without 'database is locked'")
    func twoWritersOneFile() async throws {
        let first = try SQLiteStore.temporary()
        let second = try SQLiteStore(path: first.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in [first, second].enumerated() {
                group.addTask {
                    let readings = store.repository(Reading.self)
                    for sequence in 0..<100 {
                        _ = try await store.write { tx in
                            try await tx.repository(Reading.self).upsert(
                                Reading(station: "s\(index)", sequence: sequence, value: Double(sequence)))
                        }
                        _ = try await readings.count()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await first.repository(Reading.self).count() == 200)
    }
}
