import Depot
import DepotSQLite
import DepotTesting
import Foundation
import GRDB
import Testing

/// Every attribute kind read straight from SQLite's row (the fast path), and each optional one.
struct Gauge: Entity, Equatable {
    var id: Int
    var label: String
    var note: String?
    var value: Double
    var spare: Double?
    var count: Int
    var limit: Int?
    var active: Bool
    var flagged: Bool?

    static let schema = Schema<Gauge>("readings", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.label, "label")
        Column(\.note, "note")
        Column(\.value, "value")
        Column(\.spare, "spare")
        Column(\.count, "count")
        Column(\.limit, "limit_")
        Column(\.active, "active")
        Column(\.flagged, "flagged")
    }

    static func sample(_ id: Int) -> Gauge {
        Gauge(
            id: id, label: "reading \(id) · ünïcode", note: id.isMultiple(of: 2) ? nil : "note \(id)",
            value: Double(id) / 7, spare: id.isMultiple(of: 3) ? nil : -Double(id), count: id * 1_000_003,
            limit: id.isMultiple(of: 5) ? nil : Int.min + id, active: id.isMultiple(of: 2),
            flagged: id.isMultiple(of: 4) ? nil : id.isMultiple(of: 3))
    }
}

@Suite("SQLite rows decode in place", .timeLimit(.minutes(10)))
struct SQLiteRowDecodingTests {
    @Test("every attribute kind and NULL round-trip across many result chunks")
    func roundTrip() async throws {
        let store = try SQLiteStore.temporary()
        let readings = store.repository(Gauge.self)
        let rows = (1...5_000).map(Gauge.sample)
        try await readings.insert(rows)
        #expect(try await readings.fetchAll() == rows)
        #expect(try await readings.find(17) == Gauge.sample(17))
        #expect(try await readings.fetch(where: \.id > 4_990).map(\.id) == Array(4_991...5_000))
    }

    @Test("values SQLite holds in another storage class decode as the general path decodes them")
    func otherStorageClasses() async throws {
        let store = try SQLiteStore.temporary()
        let readings = store.repository(Gauge.self)
        try await readings.insert([Gauge.sample(1), Gauge.sample(2)])
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            // An integer column holding a whole REAL, a BOOLEAN holding 1 written as REAL.
            try db.execute(sql: "UPDATE readings SET count = 42.0, active = 1.0, limit_ = 7.0 WHERE id = 1")
        }
        let first = try #require(try await readings.find(1))
        #expect(first.count == 42)
        #expect(first.limit == 7)
        #expect(first.active == true)
    }

    @Test("a value that does not fit fails naming column and key, after rows already decoded")
    func mismatchLate() async throws {
        let store = try SQLiteStore.temporary()
        let readings = store.repository(Gauge.self)
        try await readings.insert((1...3_000).map(Gauge.sample))
        let queue = try DatabaseQueue(path: store.path)
        for (sql, column) in [
            ("UPDATE readings SET count = 2.5 WHERE id = 2500", "count"),
            ("UPDATE readings SET active = 2 WHERE id = 2500", "active"),
            ("UPDATE readings SET flagged = 'yes' WHERE id = 2500", "flagged"),
            ("UPDATE readings SET label = X'00ff' WHERE id = 2500", "label"),
        ] {
            try await readings.upsert(Gauge.sample(2500))
            try await queue.write { db in try db.execute(sql: sql) }
            let error = await #expect(throws: DepotError.self, "\(sql)") { _ = try await readings.fetchAll() }
            #expect(error?.kind == .decodingFailed)
            #expect(error?.column == column)
            #expect(error?.message.contains("readings row 2500") == true, "\(error?.message ?? "")")
        }
        // The table itself is fine once the row is.
        try await readings.upsert(Gauge.sample(2500))
        #expect(try await readings.count() == 3_000)
        #expect(try await readings.fetchAll().count == 3_000)
    }
}
