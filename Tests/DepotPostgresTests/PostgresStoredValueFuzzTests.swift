import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Foundation
import PropertyBased
import Synchronization
import Testing

/// SQL literals another program could store in a column of each PostgreSQL type Depot uses:
/// values that fit the column but not always the Swift property (an `Int8` in a `bigint`, a
/// `Float` in a `double precision`, an enum's unknown raw value in a `text`, an infinite date).
private let literals: [String: Generator<String, AnySequence<Any>>] = [
    "bigint": Gen<String>.oneOf(
        Gen.int64(in: Int64.min...Int64.max).map { "\($0)" }.eraseToAnySequence(),
        Gen.int64(in: -300...70_000).map { "\($0)" }.eraseToAnySequence()
    ).eraseToAny(),
    "double precision": Gen<String>.oneOf(
        Gen.double(in: -1e300...1e300).map { "\($0)::float8" }.eraseToAnySequence(),
        Gen.element(of: ["'NaN'::float8", "'Infinity'::float8", "'-Infinity'::float8", "'-0'::float8", "3.5e38"])
            .map { $0 ?? "0" }.eraseToAnySequence()
    ).eraseToAny(),
    "numeric": Gen.element(of: [
        "'NaN'::numeric", "1e100", "-1e-100", "123456789012345678901234567890.123456789", "0", "-0.5",
        "1" + String(repeating: "0", count: 200),
    ]).map { $0 ?? "0" }.eraseToAny(),
    "text": Gen<String>.oneOf(
        Gen.element(of: ["''", "'not a url'", "'http://[bad'", "'asphalt'", "'ASPHALT'", "'ß'", "'👩‍🚀'", "'42'"])
            .map { $0 ?? "''" }.eraseToAnySequence(),
        Gen.unicodeScalar(in: "\u{20}"..."\u{D7FF}").map { Character($0) }.string(of: 0...8)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.eraseToAnySequence()
    ).eraseToAny(),
    "bytea": Gen.uint8(in: 0...255).array(of: 0...20)
        .map { "'\\x" + $0.map { String(format: "%02x", $0) }.joined() + "'::bytea" }.eraseToAny(),
    "timestamp with time zone": Gen<String>.oneOf(
        Gen.element(of: [
            "'infinity'::timestamptz", "'-infinity'::timestamptz", "'294276-12-31 00:00:00+00'", "'4713-01-01 BC'",
            "'2000-01-01 00:00:00.123456+00'",
        ]).map { $0 ?? "now()" }.eraseToAnySequence(),
        Gen.int64(in: -10_000_000_000...10_000_000_000).map { "to_timestamp(\($0))" }.eraseToAnySequence()
    ).eraseToAny(),
    "uuid": Gen.always("gen_random_uuid()").eraseToAny(),
    "jsonb": Gen.element(of: ["'{}'", "'[]'", "'null'", "'\"x\"'", "'{\"length\": -1}'", "'[1, 2]'", "'1e400'"])
        .map { ($0 ?? "'{}'") + "::jsonb" }.eraseToAny(),
    "boolean": Gen.element(of: ["true", "false"]).map { $0 ?? "true" }.eraseToAny(),
]

@Suite(
    "Fuzzed stored values read back from PostgreSQL",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct PostgresStoredValueFuzzTests {
    @Test(
        "a value another program stores in any column, fitting the column's type but perhaps not the property's, reads back as a value or a named error"
    )
    func strayValues() async throws {
        try await HeavyHarness.run {
            try await PostgresTestServer.withStore { store in
                let rows = store.repository(AllTypes.self)
                try await rows.insert(AllTypes.extremes)
                let schema = try #require(store.configuration.schema)
                let columns = try await PostgresTestServer.rawRows(
                    "SELECT column_name::text, data_type::text, is_nullable::text FROM information_schema.columns "
                        + "WHERE table_schema = '\(schema)' AND table_name = 'all_types' AND column_name <> 'id'")
                let typed = columns.compactMap { row -> (name: String, type: String, nullable: Bool)? in
                    guard let name = row[0], let type = row[1] else { return nil }
                    return (name, type, row[2] == "YES")
                }
                try #require(typed.count == AllTypes.schema.table.columns.count - 1)
                let unknown = typed.filter { literals[$0.type] == nil }.map(\.type)
                #expect(unknown.isEmpty, "no literals for \(unknown)")
                let counts = Mutex((values: 0, errors: 0, refused: 0))
                let id = AllTypes.extremes[0].id
                let column = Gen.element(of: typed).map { $0 ?? typed[0] }
                await propertyCheck(count: 300, input: column, Gen.uint64(in: 0...UInt64.max)) { column, seed in
                    var random = Xoshiro(seed: (seed, seed ^ 0x9E37_79B9_7F4A_7C15, ~seed, 42))
                    let literal =
                        column.nullable && Int.random(in: 0..<6, using: &random) == 0
                        ? "NULL" : literals[column.type]?.run(using: &random) ?? "NULL"
                    do {
                        _ = try await PostgresTestServer.rawRows(
                            "UPDATE all_types SET \"\(column.name)\" = \(literal) WHERE id = \(id)", schema: schema)
                    } catch {
                        counts.withLock { $0.refused += 1 }  // the server refused the literal for the column
                        return
                    }
                    do {
                        #expect(try await rows.find(id) != nil)
                        counts.withLock { $0.values += 1 }
                    } catch let error as DepotError {
                        #expect(
                            error.kind == .decodingFailed, "\(column.name) = \(literal): \(error.kind) \(error.message)"
                        )
                        #expect(error.message.contains(column.name), "\(column.name) = \(literal): \(error.message)")
                        counts.withLock { $0.errors += 1 }
                    } catch {
                        Issue.record("\(column.name) = \(literal): \(error)")
                    }
                    do { try await rows.upsert(AllTypes.extremes[0]) } catch {
                        Issue.record("restoring the row: \(error)")
                    }
                }
                let (values, errors, refused) = counts.withLock { ($0.values, $0.errors, $0.refused) }
                print(
                    "fuzzed PostgreSQL values: \(values) read as values, \(errors) refused with a named error, "
                        + "\(refused) refused by the server")
                #expect(values + errors + refused == 300 && errors > 0 && values > 0)
            }
        }
    }
}
