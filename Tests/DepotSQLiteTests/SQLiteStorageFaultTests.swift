import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import GRDB
import Testing

/// A size-limited file system of the test's own: a tmpfs mounted on a new folder (root only; CI
/// runs as root).
struct SmallFileSystem {
    let folder: URL

    /// Whether this process may mount one (it runs as root).
    static let isAvailable = geteuid() == 0

    /// Under `CI=true` the tests run whether or not a mount is possible (and fail if not).
    static let isRequired = ProcessInfo.processInfo.environment["CI"] == "true"

    /// Mounts a tmpfs of `kilobytes` on a new folder, hands it to `body`, and unmounts it
    /// afterwards, whatever happens.
    static func with(kilobytes: Int, _ body: (SmallFileSystem) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-small-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mounted = SmallFileSystem(folder: folder)
        try await mounted.shell("mount -t tmpfs -o size=\(kilobytes)k tmpfs '\(folder.path)'")
        try await withCleanup {
            try await body(mounted)
        } cleanup: {
            try? await mounted.shell("umount '\(folder.path)'")
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Mounts it again with new options (`size=4m`, `ro`, `rw`); its files stay. Tries again for a
    /// while when it is busy (`ro` waits for a store just released to close its files).
    func remount(_ options: String) async throws {
        for _ in 0..<50 {
            do {
                return try await shell("mount -o remount,\(options) '\(folder.path)'")
            } catch {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        try await shell("mount -o remount,\(options) '\(folder.path)'")
    }

    func shell(_ line: String) async throws {
        let (status, output) = try await DepotTestSupport.shell(line)
        guard status == 0 else { throw DepotError(.storage, "`\(line)` failed with status \(status): \(output)") }
    }
}

@Suite(
    "SQLite storage faults", .timeLimit(.minutes(10)),
    .enabled(
        if: SmallFileSystem.isAvailable || SmallFileSystem.isRequired,
        "mounting a size-limited file system needs root (CI runs these as root)"))
struct SQLiteStorageFaultTests {
    static func rows(_ range: ClosedRange<Int>) -> [TestAirport] {
        range.map { index in
            var airport = TestAirport.sample[index % TestAirport.sample.count]
            airport.icao = "X\(index)"
            airport.name = String(repeating: "n", count: 400) + "\(index)"
            return airport
        }
    }

    @Test(
        "a full disk fails the write with .storage naming the file, writes nothing of the batch, and the same store writes again once there is space"
    )
    func diskFull() async throws {
        try await SmallFileSystem.with(kilobytes: 512) { disk in
            let path = disk.folder.appendingPathComponent("store.sqlite").path
            let store = try SQLiteStore(path: path)
            let airports = store.repository(TestAirport.self)
            // Batches of 100 rows (about 45 kB) until the disk is full.
            var stored = 0
            var failure: DepotError?
            for batch in 0..<100 {
                do {
                    try await airports.insert(Self.rows(batch * 100 + 1...batch * 100 + 100))
                    stored += 100
                } catch let error as DepotError {
                    failure = error
                    break
                }
            }
            let error = try #require(failure, "512 kB filled up")
            #expect(error.kind == .storage)
            #expect(error.message.contains(path), "\(error.message)")
            #expect(error.message.contains("full"), "\(error.message)")
            print("disk full after \(stored) rows: \(error.message)")
            // Nothing of the failed batch; everything before it.
            #expect(try await airports.count() == stored)
            #expect(try await airports.fetchAll().map(\.icao).sorted() == Self.rows(1...stored).map(\.icao).sorted())

            try await disk.remount("size=8m")
            try await airports.insert(Self.rows(stored + 1...stored + 100))
            #expect(try await airports.count() == stored + 100)
            let queue = try DatabaseQueue(path: path)
            #expect(try await queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
            try queue.close()
        }
    }

    @Test("a database on a read-only file system is read, and a write fails with .storage naming the file")
    func readOnly() async throws {
        try await SmallFileSystem.with(kilobytes: 4096) { disk in
            let path = disk.folder.appendingPathComponent("store.sqlite").path
            do {
                let store = try SQLiteStore(path: path)
                try await store.repository(TestAirport.self).insert(TestAirport.sample)
            }
            try await disk.remount("ro")
            let failure: DepotError
            do {
                let store = try SQLiteStore(path: path)
                let airports = store.repository(TestAirport.self)
                do {
                    #expect(try await airports.count() == TestAirport.sample.count)
                } catch let error as DepotError {
                    // SQLite may refuse a WAL database it cannot write its index (-shm) for.
                    #expect(error.kind == .storage && error.message.contains(path), "\(error.message)")
                }
                let write = await #expect(throws: DepotError.self) {
                    try await airports.upsert(TestAirport.sample[0])
                }
                failure = try #require(write)
            } catch let error as DepotError {
                failure = error  // refused at open
            }
            #expect(failure.kind == .storage)
            #expect(failure.message.contains(path), "\(failure.message)")
            print("read-only file system: \(failure.message)")

            try await disk.remount("rw")
            let store = try SQLiteStore(path: path)
            try await store.repository(TestAirport.self).upsert(TestAirport.sample[0])
            #expect(try await store.repository(TestAirport.self).count() == TestAirport.sample.count)
        }
    }
}

@Suite("SQLite file deleted underneath")
struct SQLiteDeletedFileTests {
    static func renamed(_ airport: TestAirport, _ icao: String) -> TestAirport {
        var airport = airport
        airport.icao = icao
        return airport
    }

    @Test(
        "a database file deleted while the store is open fails the next write with .storage saying so, instead of committing into a file no one can open"
    )
    func deletedUnderneath() async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let store = try SQLiteStore(path: path)
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

        let error = await #expect(throws: DepotError.self) { try await airports.upsert(TestAirport.sample[0]) }
        #expect(error?.kind == .storage)
        #expect(error?.message.contains("deleted or replaced") == true, "\(String(describing: error))")
        #expect(error?.message.contains(path) == true)
        let transaction = await #expect(throws: DepotError.self) {
            let new = Self.renamed(TestAirport.sample[1], "ZZZZ")
            try await store.write { tx in try await tx.repository(TestAirport.self).insert(new) }
        }
        #expect(transaction?.kind == .storage)

        // A new store on the path starts a new, empty database.
        let fresh = try SQLiteStore(path: path)
        #expect(try await fresh.repository(TestAirport.self).count() == 0)
        try await fresh.repository(TestAirport.self).insert(TestAirport.sample)
        #expect(try await fresh.repository(TestAirport.self).count() == TestAirport.sample.count)
    }

    @Test("a database file replaced by another one while the store is open is not written to either")
    func replacedUnderneath() async throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let other = folder.appendingPathComponent("other.sqlite").path
        let store = try SQLiteStore(path: path)
        try await store.repository(TestAirport.self).insert(TestAirport.sample)
        do {
            let replacement = try SQLiteStore(path: other)
            try await replacement.repository(TestAirport.self).insert(TestAirport.sample[0])
        }
        // The replacement closed (its log checkpointed into it): the main file alone is the database.
        #expect(!FileManager.default.fileExists(atPath: other + "-wal"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.moveItem(atPath: other, toPath: path)
        let error = await #expect(throws: DepotError.self) {
            try await store.repository(TestAirport.self).upsert(TestAirport.sample[1])
        }
        #expect(error?.kind == .storage)
        #expect(try await SQLiteStore(path: path).repository(TestAirport.self).fetchAll() == [TestAirport.sample[0]])
    }
}
