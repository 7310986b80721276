import Depot
import Foundation
import Testing

extension StoreConformance {
    /// Batches large enough for a store's bulk path (PostgreSQL's `COPY`, from 500 rows): the
    /// same values, counts and failures as a small batch, on every store.
    static let bulkWriteCases: [ConformanceCase] = [
        ConformanceCase("a batch large enough for the bulk path round-trips every type exactly") {
            (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            let rows =
                AllTypes.bulk(1_200, seed: 0xB01C, firstID: 1)
                + AllTypes.extremes.enumerated().map {
                    var row = $0.element
                    row.id = 1_201 + $0.offset
                    return row
                }
            try await repository.insert(rows)
            expectSame(try await repository.fetchAll(), rows)
        },
        ConformanceCase("a large upsert replaces changed rows, adds new keys, and counts only those") {
            (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            let stored = AllTypes.bulk(1_000, seed: 7, firstID: 1)
            try await repository.insert(stored)
            // Keys 501…600 unchanged, 601…1000 changed, 1001…1500 new.
            let changed = AllTypes.bulk(900, seed: 8, firstID: 601)
            let batch = Array(stored[500..<600]) + changed
            #expect(try await repository.upsert(batch) == 900)
            expectSame(try await repository.fetchAll(), Array(stored[0..<600]) + changed)
            #expect(try await repository.upsert(batch) == 0, "nothing changed the second time")
        },
        ConformanceCase("a large batch with a stored key fails naming it and writes nothing; the store goes on") {
            (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            try await repository.insert(AllTypes.bulk(10, seed: 1, firstID: 991))
            let error = await #expect(throws: DepotError.self) {
                try await repository.insert(AllTypes.bulk(1_000, seed: 2, firstID: 1))
            }
            #expect(error?.kind == .constraintViolation)
            #expect(error?.message.contains("991") == true, "names the key: \(String(describing: error))")
            #expect(try await repository.count() == 10)
            try await repository.insert(AllTypes.bulk(1_000, seed: 3, firstID: 1_001))
            #expect(try await repository.count() == 1_010)
        },
        ConformanceCase("large upserts and updates in one transaction are undone together when it fails") {
            (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            let stored = AllTypes.bulk(700, seed: 11, firstID: 1)
            try await repository.insert(stored)
            let table = AllTypes.schema.table
            let renamed = RowBatch(
                columns: ["id", "string"],
                values: (1...700).flatMap { [StoredValue.integer(Int64($0)), .text("r\($0)")] })
            struct Abandon: Error {}
            await #expect(throws: Abandon.self) {
                try await store.transaction { writer in
                    // Twice each: a bulk path that stages rows must leave room for the next batch.
                    let inside = Transaction(writer: writer).repository(AllTypes.self)
                    for seed in [12, 13] as [UInt64] {
                        #expect(try await inside.upsert(AllTypes.bulk(700, seed: seed, firstID: 351)) == 700)
                    }
                    #expect(try await writer.write(renamed, into: table, mode: .update) == 700)
                    #expect(try await writer.write(renamed, into: table, mode: .update) == 0)
                    throw Abandon()
                }
            }
            expectSame(try await repository.fetchAll(), stored)
            let written = try await store.transaction { writer in
                try await writer.write(renamed, into: table, mode: .update)
            }
            #expect(written == 700)
            #expect(try await repository.fetchAll().map(\.string) == (1...700).map { "r\($0)" })
        },
    ]
}

/// Expects `got` to hold `want`'s rows, in order, field for field (dates to the microsecond),
/// naming the first rows that differ and how.
func expectSame(_ got: [AllTypes], _ want: [AllTypes], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(got.count == want.count, sourceLocation: sourceLocation)
    let differing = zip(got, want).filter { got, want in
        got != want || got.date.microseconds != want.date.microseconds
    }
    let described = differing.prefix(3).map { got, want in
        let fields = zip(Mirror(reflecting: got).children, Mirror(reflecting: want).children).compactMap {
            String(describing: $0.value) == String(describing: $1.value)
                ? nil : "\($0.label ?? "?"): \($0.value) ≠ \($1.value)"
        }
        return "id \(want.id): " + fields.joined(separator: "; ")
    }
    #expect(
        differing.isEmpty, "\(differing.count) rows differ: \(described.joined(separator: " | "))",
        sourceLocation: sourceLocation)
}

extension AllTypes {
    /// `count` rows of random values of every type, keyed `firstID`, `firstID + 1`, …: text with
    /// tabs, newlines, backslashes, `\N`, the last plane's last character and runs of 3 KB; doubles and floats from random bits, infinities
    /// included (never NaN, which stores refuse); decimals of up to 30 digits; dates to the
    /// microsecond from 1716 to 2285, and whole seconds from 1000 BC to 9999 AD; NULLs in a third
    /// of the optional columns. The same seed gives the same rows.
    public static func bulk(_ count: Int, seed: UInt64, firstID: Int) -> [AllTypes] {
        var random = SplitMix64(state: seed)
        func text() -> String {
            let pieces = [
                "", "a", "Oslo", "\t", "\n", "\r\n", "\\", "\\N", "\\.", "ß", "👩‍🚀", "e\u{301}", "'", "\"", ",",
                " ", "日本", "\u{7F}", "\u{1}", "\u{10FFFD}", String(repeating: "ø", count: 1_500),
            ]
            return (0..<Int.random(in: 0...4, using: &random)).map { _ in
                pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            .joined()
        }
        func double() -> Double {
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                let special: [Double] = [.infinity, -.infinity, -0.0, 0, .leastNonzeroMagnitude]
                return special[Int.random(in: 0..<special.count, using: &random)]
            case 1: return Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 100
            default:
                let value = Double(bitPattern: random.next())
                return value.isNaN ? 1.5 : value
            }
        }
        func float() -> Float {
            let value = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            return value.isNaN ? -.infinity : value
        }
        func decimal() -> Decimal {
            // Up to 30 random digits, the point anywhere among them.
            let count = Int.random(in: 1...30, using: &random)
            var significand = Decimal(0)
            for _ in 0..<count { significand = significand * 10 + Decimal(Int.random(in: 0...9, using: &random)) }
            let sign: FloatingPointSign = Bool.random(using: &random) ? .minus : .plus
            return Decimal(
                sign: sign, exponent: -Int.random(in: 0...count, using: &random), significand: significand)
        }
        func date() -> Date {
            if Bool.random(using: &random) {
                // Within 2^53 microseconds of 2001: every microsecond is a distinct double.
                return Date(microseconds: Int64.random(in: -(1 << 53)...(1 << 53), using: &random))
            }
            let seconds = Int64.random(in: -94_670_000_000...252_400_000_000, using: &random)
            return Date(microseconds: seconds * 1_000_000)
        }
        func bytes() -> Data {
            Data((0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        func uuid() -> UUID {
            let (high, low) = (random.next(), random.next())
            return withUnsafeBytes(of: (high, low)) { raw in
                UUID(uuid: raw.load(as: uuid_t.self))
            }
        }
        func maybe<T>(_ make: () -> T) -> T? { Int.random(in: 0..<3, using: &random) == 0 ? nil : make() }
        let urls = ["https://example.com/a%20b?q=ø&x=1#frag", "file:///tmp/x", "https://日本.example/パス", "mailto:a@b.c"]
            .compactMap { URL(string: $0) }
        let surfaces: [Surface] = [.asphalt, .grass, .gravel]
        func runway() -> Runway {
            Runway(
                designator: text(), lengthMeters: Int.random(in: -10...5_000, using: &random),
                lights: (0..<Int.random(in: 0...2, using: &random)).map { _ in text() })
        }
        return (0..<count).map { offset in
            AllTypes(
                id: firstID + offset, bool: Bool.random(using: &random),
                int8: .random(in: .min ... .max, using: &random),
                int16: .random(in: .min ... .max, using: &random), int32: .random(in: .min ... .max, using: &random),
                int64: .random(in: .min ... .max, using: &random), uint8: .random(in: .min ... .max, using: &random),
                uint16: .random(in: .min ... .max, using: &random), uint32: .random(in: .min ... .max, using: &random),
                float: float(), double: double(), decimal: decimal(), date: date(), string: text(), data: bytes(),
                uuid: uuid(), url: urls[Int.random(in: 0..<urls.count, using: &random)],
                surface: surfaces[Int.random(in: 0..<3, using: &random)],
                length: Feet(Int.random(in: 0...1_000_000, using: &random)),
                runway: runway(), optionalInt: maybe { Int.random(in: .min ... .max, using: &random) },
                optionalString: maybe(text), optionalDate: maybe(date), optionalDecimal: maybe(decimal),
                optionalData: maybe(bytes), optionalUUID: maybe(uuid),
                optionalSurface: maybe { surfaces[Int.random(in: 0..<3, using: &random)] },
                optionalRunway: maybe(runway))
        }
    }
}
