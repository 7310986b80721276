import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Synchronization
import Testing

@testable import DepotSync

// Axes: store (in-memory, SQLite file, PostgreSQL) × write (insert, upsert of whole rows, present
// and absent; a partial batch as upsert and as update, present and absent; update by value and
// by addition; remove) × column type (every type of AllTypes, at its extremes, a date finer than
// the microsecond).

/// What a write recorded as a row's values after it (worked out from the rows before and the
/// values written, without reading them again) must be what reading the row gives.
@Suite("The rows a captured write records as written", .timeLimit(.minutes(5)))
struct CapturedRowsTests {
    @Test(
        "the rows after a write, worked out without reading them, are the rows stored",
        arguments: ["memory", "sqlite", "postgres"])
    func afterRowsAreStoredRows(_ kind: String) async throws {
        let store: any Store
        switch kind {
        case "memory": store = InMemoryStore()
        case "sqlite": store = try SQLiteStore.temporary()
        default:
            // Without a server (and not under CI=true) it skips, as PostgresEnvironment says.
            guard PostgresEnvironment.isConfigured else { return }
            store = try PostgresStore(url: try PostgresEnvironment.scratchURL())
        }
        try await withCleanup {
            try await check(store)
        } cleanup: {
            if let postgres = store as? PostgresStore {
                try? await postgres.dropSchema()
                await postgres.close()
            }
        }
    }

    func check(_ store: any Store) async throws {
        if let migratable = store as? any MigratableStore {
            try await migratable.migrate(
                Migrations([Migration("1", [.createTable(AllTypes.self), .createTable(TestAirport.self)])]))
        }
        let compared = Mutex(0)
        let mismatches = Mutex<[String]>([])
        // A recorder that reads each row itself and compares it with the row it was handed.
        let recorder: CapturingWriter.Recorder = { table, keys, _, after, writer in
            let read = try await RowReads.rows(of: table, keys: keys, in: writer)
            #expect(Set(read.keys) == Set(after.keys), "\(table.name): the rows after")
            for (key, row) in read {
                guard let handed = after[key] else { continue }
                for (index, column) in table.columns.enumerated()
                where !RowReads.same(row[index], handed[index], type: column.type) {
                    mismatches.withLock {
                        $0.append(
                            "\(table.name) \(key) \(column.name): stored \(row[index]), recorded \(handed[index])")
                    }
                }
                compared.withLock { $0 += 1 }
            }
        }
        func captured(_ body: @escaping @Sendable (Transaction) async throws -> Void) async throws {
            try await captured { tx, _ in try await body(tx) }
        }
        func captured(_ body: @escaping @Sendable (Transaction, CapturingWriter) async throws -> Void)
            async throws
        {
            try await store.transaction { writer in
                let capturing = CapturingWriter(base: writer, captured: ["all_types", "airports"], recorder: recorder)
                try await body(Transaction(writer: capturing), capturing)
            }
        }
        let extremes = AllTypes.extremes
        // Whole rows, not stored yet, then stored.
        try await captured { try await $0.repository(AllTypes.self).insert(extremes) }
        let changed = extremes.map { row in
            var row = row
            row.string += " ✎"
            row.bool.toggle()
            // Finer than the microsecond PostgreSQL keeps.
            row.date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
            row.optionalInt = row.optionalInt == nil ? 7 : nil
            return row
        }
        try await captured { try await $0.repository(AllTypes.self).upsert(changed) }
        // Partial batches: patches of stored rows (an update of their columns).
        try await captured { tx in
            try await tx.repository(AllTypes.self).apply(
                extremes.map {
                    Patch<AllTypes>(key: $0.id).set(\.double, 2.5).set(\.optionalString, nil).set(\.surface, .grass)
                })
        }
        // A partial batch of a row not stored, as an upsert: its other columns take defaults.
        let airports = TestAirport.schema.table
        try await captured { _, writer in
            _ = try await writer.write(
                RowBatch(
                    columns: ["icao", "name", "country", "elevation", "lat", "lon"],
                    values: [.text("ZZZZ"), .text("New"), .text("NO"), .double(3), .double(60), .double(10)]),
                into: airports, mode: .upsert)
            // And one of a stored row, and one of a row not stored, as updates.
            _ = try await writer.write(
                RowBatch(
                    columns: ["icao", "name"], values: [.text("ZZZZ"), .text("Renamed"), .text("NONE"), .text("x")]),
                into: airports, mode: .update)
        }
        // Updates by value (a date finer than the microsecond, JSON, NULL) and by addition.
        try await captured { tx in
            let rows = tx.repository(AllTypes.self)
            try await rows.update(
                where: \.id == extremes[0].id,
                set: [
                    .set(\.optionalDate, to: Date(timeIntervalSinceReferenceDate: 5.000_000_7)),
                    .set(\.runway, to: extremes[1].runway), .set(\.optionalDecimal, to: nil),
                ])
            try await rows.update(where: \.id != extremes[0].id, set: \.double, to: \.double + 1.0)
        }
        try await captured { tx in _ = try await tx.repository(AllTypes.self).remove(extremes[0].id) }
        #expect(mismatches.withLock { $0 }.isEmpty, "\(mismatches.withLock { $0 })")
        #expect(compared.withLock { $0 } >= 3 * extremes.count + 2, "rows compared")
    }
}
