import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import GRDB
import PropertyBased
import Synchronization
import Testing

/// A value another program could have left in a SQLite column: any storage class, any contents
/// (text that is not UTF-8, numbers out of every Swift type's range, NaN).
enum RawSQLiteValue: Sendable, CustomStringConvertible {
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])
    case null

    var description: String {
        switch self {
        case .integer(let value): "integer \(value)"
        case .real(let value): "real \(value)"
        case .text(let bytes): "text bytes \(bytes)"
        case .blob(let bytes): "blob \(bytes)"
        case .null: "NULL"
        }
    }

    /// The SQL expression that stores it, and its argument.
    var sql: (expression: String, argument: DatabaseValue?) {
        switch self {
        case .integer(let value): ("?", value.databaseValue)
        case .real(let value): ("?", value.databaseValue)
        case .text(let bytes): ("CAST(? AS TEXT)", Data(bytes).databaseValue)
        case .blob(let bytes): ("?", Data(bytes).databaseValue)
        case .null: ("NULL", nil)
        }
    }

    static let generator = Gen<RawSQLiteValue>.oneOf(
        Gen.int64(in: Int64.min...Int64.max).map { RawSQLiteValue.integer($0) }.eraseToAnySequence(),
        Gen.int64(in: -300...70_000).map { RawSQLiteValue.integer($0) }.eraseToAnySequence(),
        Gen.double(in: -1e20...1e20).map { RawSQLiteValue.real($0) }.eraseToAnySequence(),
        Gen.element(of: [Double.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, 0.5])
            .map { RawSQLiteValue.real($0 ?? 0) }.eraseToAnySequence(),
        Gen.uint8(in: 0...255).array(of: 0...24).map { RawSQLiteValue.text($0) }.eraseToAnySequence(),
        Gen.element(of: ["1", "-0", "1e400", "NaN", "12.5", "2024-01-01", "true", "A", "00000000-0000"])
            .map { RawSQLiteValue.text(Array(($0 ?? "").utf8)) }.eraseToAnySequence(),
        Gen.uint8(in: 0...255).array(of: 0...24).map { RawSQLiteValue.blob($0) }.eraseToAnySequence(),
        Gen.always(RawSQLiteValue.null).eraseToAnySequence()
    )
}

@Suite("Fuzzed stored values read back from SQLite")
struct SQLiteStoredValueFuzzTests {
    static let columns = AllTypes.schema.table.columns.map(\.name).filter { $0 != "id" }

    @Test(
        "a value of any type or encoding written into any column by another program reads back as a value or a named error, never a trap"
    )
    func strayValues() async throws {
        try await HeavyHarness.run {
            let folder = try scratchDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("store.sqlite").path
            let store = try SQLiteStore(path: path)
            let rows = store.repository(AllTypes.self)
            try await rows.insert(AllTypes.extremes)
            let queue = try DatabaseQueue(path: path)
            let outcomes = Outcomes()
            let columns = Gen.element(of: Self.columns).map { $0 ?? "int8" }
            await propertyCheck(count: 2000, input: columns, RawSQLiteValue.generator) { column, value in
                await Self.check(value, in: column, queue: queue, rows: rows, outcomes: outcomes)
            }
            try queue.close()
            let (values, errors, refused) = outcomes.counts.withLock { ($0.values, $0.errors, $0.refusedBySQLite) }
            print(
                "fuzzed SQLite values: \(values) read as values, \(errors) refused with a named error, "
                    + "\(refused) refused by SQLite itself (NULL for NOT NULL)")
            #expect(values + errors + refused == 2000)
            #expect(errors > 0 && values > 0)
        }
    }

    /// Writes `value` into `column` of the first row with plain SQL, reads the row back through
    /// Depot, and puts the row back.
    static func check(
        _ value: RawSQLiteValue, in column: String, queue: DatabaseQueue, rows: Repository<AllTypes>,
        outcomes: Outcomes
    ) async {
        let id = AllTypes.extremes[0].id
        do {
            let (expression, argument) = value.sql
            let arguments = StatementArguments(argument.map { [$0, id.databaseValue] } ?? [id.databaseValue])
            do {
                try await queue.write { db in
                    try db.execute(
                        sql: "UPDATE all_types SET \"\(column)\" = \(expression) WHERE id = ?",
                        arguments: arguments)
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                outcomes.counts.withLock { $0.refusedBySQLite += 1 }  // NULL in a NOT NULL column
                return
            }
            do {
                #expect(try await rows.find(id) != nil)
                _ = try await rows.fetchAll()
                outcomes.counts.withLock { $0.values += 1 }
            } catch let error as DepotError {
                #expect(error.kind == .decodingFailed, "\(column) holding \(value): \(error.kind) \(error.message)")
                #expect(error.message.contains(column), "\(column) holding \(value): \(error.message)")
                outcomes.counts.withLock { $0.errors += 1 }
            }
            try await rows.upsert(AllTypes.extremes[0])
        } catch {
            Issue.record("\(column) holding \(value): \(error)")
        }
    }
}

/// How many fuzzed values read back as values, how many as named errors, and how many SQLite
/// refused to store.
final class Outcomes: Sendable {
    let counts = Mutex((values: 0, errors: 0, refusedBySQLite: 0))
}
