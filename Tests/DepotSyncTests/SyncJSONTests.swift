import Depot
import DepotSync
import DepotTesting
import Foundation
import Testing

/// The outbox's key and value texts are written by hand; `JSONEncoder` wrote the texts already
/// stored, which keys are matched against. These hold the two to the same bytes. Axes: every
/// value kind (null, text, integer, double, bool, decimal, blob, date, UUID); extremes (every
/// Unicode scalar, NUL and controls, `/` and `\`, ±0, subnormals, the largest double, ±∞, NaN,
/// Int64 limits); keys of one to three values; value sets of zero to six names, ASCII or any text.
@Suite("Outbox JSON texts")
struct SyncJSONTests {
    /// What `JSONEncoder` (`.sortedKeys`) writes for `value`.
    static func encoded(_ value: some Encodable) throws -> String {
        String(decoding: try SyncJSON.encoder().encode(value), as: UTF8.self)
    }

    @Test("a key text is JSONEncoder's bytes for text holding every Unicode scalar")
    func everyScalar() throws {
        // Escaping is per byte; strings of 128 scalars keep the encoder calls few.
        let scalars = (0...0x10_FFFF).lazy.compactMap(Unicode.Scalar.init(_:))
        var batch = String.UnicodeScalarView()
        var checked = 0
        for scalar in scalars {
            batch.append(scalar)
            if batch.count == 128 || scalar.value == 0x10_FFFF {
                let key: [StoredValue] = [.text(String(batch)), .text("/\(String(batch))\\")]
                #expect(
                    try SyncJSON.keyText(key) == Self.encoded(key.map(SyncValue.init)), "scalars up to \(scalar.value)")
                checked += batch.count
                batch = String.UnicodeScalarView()
            }
        }
        #expect(checked == 0x11_0000 - 0x800, "every scalar but the surrogates")
    }

    @Test("key and value texts are JSONEncoder's bytes for random values of every kind, and read back exactly")
    func randomValues() throws {
        var random = SplitMix64(state: 0x5EED_0F_7E87)
        for round in 0..<3_000 {
            let key = (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.value(&random) }
            #expect(try SyncJSON.keyText(key) == Self.encoded(key.map(SyncValue.init)), "round \(round): \(key)")
            #expect(try SyncJSON.key(SyncJSON.keyText(key)) == key, "round \(round): \(key)")

            var values: [String: StoredValue] = [:]
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                values[Self.name(&random)] = Self.value(&random)
            }
            let text = try SyncJSON.valuesText(values)
            #expect(text == (try Self.encoded(values.mapValues(SyncValue.init))), "round \(round): \(values)")
            #expect(try SyncJSON.values(text) == values, "round \(round): \(values)")
        }
    }

    @Test("a value JSON cannot hold (NaN, a date at infinity) throws .encodingFailed instead of writing text")
    func nonFiniteNumbers() throws {
        for value in [StoredValue.double(.nan), .date(Date(timeIntervalSinceReferenceDate: .infinity))] {
            #expect(throws: DepotError.self, "\(value)") { try SyncJSON.keyText([value]) }
            do {
                _ = try SyncJSON.valuesText(["elevation": value])
                Issue.record("\(value) was written")
            } catch let error as DepotError {
                #expect(error.kind == .encodingFailed)
                #expect(error.message.contains("not a JSON number"), "\(error.message)")
            }
        }
        // Infinities are kept as text, as before.
        #expect(try SyncJSON.keyText([.double(-.infinity)]) == #"[{"real":"-Infinity"}]"#)
    }

    /// A column name: ASCII identifiers mostly, sometimes any text (the order is by UTF-8 bytes).
    static func name(_ random: inout SplitMix64) -> String {
        if Int.random(in: 0..<4, using: &random) == 0 { return text(&random) }
        let letters = Array("abcxyzABCXYZ_0123456789")
        return String(
            (0..<Int.random(in: 1...8, using: &random)).map { _ in letters[Int.random(in: 0..<23, using: &random)] })
    }

    /// Text of up to 12 scalars from ranges where escapes, multi-byte forms and slashes sit.
    static func text(_ random: inout SplitMix64) -> String {
        let ranges: [ClosedRange<UInt32>] = [
            0...0x7F, 0...0x20, 0x2F...0x2F, 0x5C...0x5C, 0x80...0x7FF, 0x2028...0x2029, 0xE000...0xFFFF,
            0x1_0000...0x10_FFFF,
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            let range = ranges[Int.random(in: 0..<ranges.count, using: &random)]
            // A surrogate (none of these ranges holds one) would be skipped.
            if let scalar = Unicode.Scalar(UInt32.random(in: range, using: &random)) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// Any value SyncValue keeps, edge cases weighted in.
    static func value(_ random: inout SplitMix64) -> StoredValue {
        func double() -> Double {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                // Any finite bit pattern: subnormals, huge and tiny exponents.
                while true {
                    let number = Double(bitPattern: random.next())
                    if number.isFinite { return number }
                }
            case 1:
                return [
                    0, -0.0, 1, -1, 100, 1e16, 1e15, 1e-7, 0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                    2.5e-5,
                ][
                    Int.random(in: 0..<12, using: &random)]
            case 2: return Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 8
            default: return Double.random(in: -1e6...1e6, using: &random)
            }
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return .null
        case 1: return .text(text(&random))
        case 2:
            return .integer(
                [Int64.min, Int64.max, 0, -1, Int64(bitPattern: random.next())][Int.random(in: 0..<5, using: &random)])
        case 3: return .double(Int.random(in: 0..<20, using: &random) == 0 ? .infinity : double())
        case 4: return .bool(Bool.random(using: &random))
        case 5:
            let units = Decimal(Int.random(in: -99_999_999...99_999_999, using: &random))
            return .decimal(
                units / Decimal(sign: .plus, exponent: Int.random(in: 0...3, using: &random), significand: 1))
        case 6:
            return .blob(
                Data(
                    (0..<Int.random(in: 0...20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            )
        case 7: return .date(Date(timeIntervalSinceReferenceDate: double()))
        case 8:
            return .uuid(UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { $0.load(as: uuid_t.self) }))
        default: return .text(name(&random))
        }
    }
}
