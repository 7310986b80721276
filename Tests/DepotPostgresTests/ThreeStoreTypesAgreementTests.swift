import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// Rows of every stored type — each integer width at its extremes, decimals of 30 digits, dates
/// before 1970, subnormal and infinite doubles, UUIDs and bytes — written to the in-memory, SQLite
/// and PostgreSQL stores alike, then compared, filtered and sorted on every column: the same rows
/// must come back, in the same order, from each.
@Suite(
    "Three stores agree on every type", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct ThreeStoreTypesAgreementTests {
    /// Values at the edges of each column's type.
    struct Pools {
        let int8: [Int8] = [.min, -1, 0, 1, .max]
        let int16: [Int16] = [.min, -300, 0, 300, .max]
        let int32: [Int32] = [.min, -70_000, 0, 70_000, .max]
        let int64: [Int64] = [.min, .min + 1, -1, 0, 1, 1 << 53, (1 << 53) + 1, .max - 1, .max]
        let uint8: [UInt8] = [0, 1, 127, 128, .max]
        let uint16: [UInt16] = [0, 1, 32_767, 32_768, .max]
        let uint32: [UInt32] = [0, 1, 2_147_483_647, 2_147_483_648, .max]
        let float: [Float] = [-.greatestFiniteMagnitude, -1.5, -0.0, .leastNonzeroMagnitude, 0.1, 1, .infinity]
        let double: [Double] = [
            -.infinity, -.greatestFiniteMagnitude, -1, -0.0, .leastNonzeroMagnitude, 0.1, 1, 1e300, .infinity,
        ]
        let decimal: [Decimal] = [
            "-99999999999999999999999999999.9", "-1", "-0.000000000000000000000000000001", "0", "0.1", "0.10",
            "1", "12345678901234567890.1234567890", "99999999999999999999999999999.9",
        ].compactMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
        let date: [Date] = [
            -979_541_767_000_001, -125, 0, 1, 721_692_800_000_250, 4_102_444_800_000_000,
        ].map { Date(microseconds: $0) }
        let data: [Data] = [Data(), Data([0]), Data([0, 0]), Data([1]), Data([255]), Data([0, 255, 0])]
        let uuid: [UUID] = [
            "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001",
            "123E4567-E89B-12D3-A456-426614174000", "80000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ].compactMap { UUID(uuidString: $0) }
        let surface: [Surface] = [.asphalt, .grass, .gravel]
    }

    @Test(
        "rows of every type with extreme values filter and sort the same way on the in-memory, SQLite and PostgreSQL stores"
    )
    func everyTypeAgrees() async throws {
        try await HeavyHarness.run {
            let seed: UInt64 = 2_026_112_6
            var fuzzer = QueryFuzzer(random: SplitMix64(state: seed))
            let pools = Pools()
            func pick<T>(_ values: [T]) -> T { fuzzer.pick(values) }
            func maybe<T>(_ values: [T]) -> T? { fuzzer.chance(25) ? nil : pick(values) }
            let rows = (0..<120).map { id -> AllTypes in
                var row = AllTypes.extremes[id % AllTypes.extremes.count]
                row.id = id
                row.bool = pick([true, false])
                row.int8 = pick(pools.int8)
                row.int16 = pick(pools.int16)
                row.int32 = pick(pools.int32)
                row.int64 = pick(pools.int64)
                row.uint8 = pick(pools.uint8)
                row.uint16 = pick(pools.uint16)
                row.uint32 = pick(pools.uint32)
                row.float = pick(pools.float)
                row.double = pick(pools.double)
                row.decimal = pick(pools.decimal)
                row.date = pick(pools.date)
                row.string = pick(fuzzer.texts) + pick(fuzzer.texts)
                row.data = pick(pools.data)
                row.uuid = pick(pools.uuid)
                row.surface = pick(pools.surface)
                row.optionalInt = maybe(pools.int64).map { Int($0) }
                row.optionalString = maybe(fuzzer.texts)
                row.optionalDate = maybe(pools.date)
                row.optionalDecimal = maybe(pools.decimal)
                row.optionalData = maybe(pools.data)
                row.optionalUUID = maybe(pools.uuid)
                row.optionalSurface = maybe(pools.surface)
                row.url = pick(AllTypes.extremes.map(\.url))
                row.runway = pick(AllTypes.extremes.map(\.runway))
                row.optionalRunway = maybe(AllTypes.extremes.map(\.runway))
                return row
            }
            let urls = AllTypes.extremes.map(\.url)
            let runways = AllTypes.extremes.map(\.runway)
            let texts = rows.map(\.string)
            func filter(depth: Int = 0) -> Filter<AllTypes> {
                switch Int.random(in: 0..<(depth > 2 ? 31 : 34), using: &fuzzer.random) {
                case 0: return \.int8 < pick(pools.int8)
                case 1: return \.int16 >= pick(pools.int16)
                case 2: return \.int32 > pick(pools.int32)
                case 3: return \.int64 <= pick(pools.int64)
                case 4: return \.uint8 == pick(pools.uint8)
                case 5: return \.uint16 > pick(pools.uint16)
                case 6: return \.uint32 < pick(pools.uint32)
                case 7: return \.float >= pick(pools.float)
                case 8: return \.double < pick(pools.double)
                case 9: return \.decimal > pick(pools.decimal)
                case 10: return \.date <= pick(pools.date)
                case 11: return \.uuid == pick(pools.uuid)
                case 12: return \.bool == pick([true, false])
                case 13: return \.optionalDecimal == maybe(pools.decimal)
                case 14: return \.optionalInt > Int(pick(pools.int64))
                case 15: return .in(\.int64, [pick(pools.int64), pick(pools.int64)])
                case 16: return \.surface == pick(pools.surface)
                // Every remaining type and operator: URL, JSON (equality), blob, bool, optional
                // text / data / UUID / JSON, text order, `not in` (empty lists too), nil tests.
                case 17: return \.url == pick(urls)
                case 18: return \.url > pick(urls)
                case 19: return \.runway == pick(runways)
                case 20: return \.runway != pick(runways)
                case 21: return \.data <= pick(pools.data)
                case 22: return \.optionalData == maybe(pools.data)
                case 23: return \.optionalUUID > pick(pools.uuid)
                case 24: return \.optionalString < pick(texts)
                case 25: return \.optionalRunway == maybe(runways)
                case 26: return !.in(\.int64, fuzzer.chance(30) ? [] : [pick(pools.int64)])
                case 27: return !.in(\.optionalString, fuzzer.chance(30) ? [] : [pick(texts)])
                case 28: return .in(\.uuid, fuzzer.chance(30) ? [] : [pick(pools.uuid), pick(pools.uuid)])
                case 29: return \.bool != pick([true, false])
                case 30: return \.string >= pick(texts)
                case 31: return filter(depth: depth + 1) && filter(depth: depth + 1)
                case 32: return filter(depth: depth + 1) || filter(depth: depth + 1)
                default: return !filter(depth: depth + 1)
                }
            }
            func ordering() -> [Ordering<AllTypes>] {
                let terms: [Ordering<AllTypes>] = [
                    .ascending(\.int8), .descending(\.int64), .ascending(\.uint32), .descending(\.float),
                    .ascending(\.double), .descending(\.decimal), .ascending(\.date), .descending(\.uuid),
                    .ascending(\.data), .descending(\.optionalInt), .ascending(\.optionalDecimal),
                    .descending(\.optionalDate), .ascending(\.string), .ascending(\.surface),
                    .descending(\.url), .ascending(\.bool), .descending(\.optionalString), .ascending(\.optionalData),
                    .descending(\.optionalUUID), .descending(\.data), .ascending(\.uuid),
                ]
                return (0..<Int.random(in: 1...3, using: &fuzzer.random)).map { _ in pick(terms) }
            }

            try await PostgresTestServer.withStore { postgres in
                let stores: [(name: String, store: any Store)] = [
                    ("in-memory", InMemoryStore()), ("SQLite", try SQLiteStore.temporary()), ("PostgreSQL", postgres),
                ]
                for (_, store) in stores { try await store.repository(AllTypes.self).insert(rows) }
                let stored = try await stores.asyncMap { try await $0.store.repository(AllTypes.self).fetchAll() }
                #expect(stored.allSatisfy { $0 == rows.sorted { $0.id < $1.id } }, "every value comes back as written")
                var disagreements: [String] = []
                for round in 0..<1_500 where disagreements.count < 3 {
                    let (where_, order) = (filter(), ordering())
                    let limit: Int? =
                        Int.random(in: 0..<3, using: &fuzzer.random) == 0
                        ? Int.random(in: 0..<15, using: &fuzzer.random) : nil
                    var answers: [[Int]] = []
                    var counts: [Int] = []
                    for (_, store) in stores {
                        let repository = store.repository(AllTypes.self)
                        answers.append(
                            try await repository.fetch(where: where_, orderBy: order, limit: limit).map(\.id))
                        counts.append(try await repository.count(where: where_))
                    }
                    if answers.contains(where: { $0 != answers[0] }) || counts.contains(where: { $0 != counts[0] }) {
                        disagreements.append(
                            "seed \(seed), round \(round): \(where_.node) order \(order.map(\.term)) limit "
                                + "\(limit.map(String.init) ?? "none"): "
                                + zip(stores.map(\.name), zip(answers, counts)).map { "\($0): \($1.0) (\($1.1))" }
                                .joined(separator: "; "))
                    }
                }
                #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
            }
        }
    }
}
