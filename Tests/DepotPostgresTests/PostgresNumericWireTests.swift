import Depot
import PostgresNIO
import Testing

@testable import DepotPostgres

/// Binary `numeric` cells as a server (or anything posing as one) may send them. No server needed.
@Suite("PostgreSQL numeric wire format")
struct PostgresNumericWireTests {
    /// A binary numeric: digit count, weight, sign, display scale, then base-10,000 digits.
    private func numeric(count: Int16, weight: Int16, sign: UInt16, scale: Int16, _ digits: [Int16]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(count)
        buffer.writeInteger(weight)
        buffer.writeInteger(sign)
        buffer.writeInteger(scale)
        for digit in digits { buffer.writeInteger(digit) }
        return buffer
    }

    @Test("a well-formed numeric reads as its exact text")
    func wellFormed() throws {
        var bytes = numeric(count: 2, weight: 0, sign: 0x4000, scale: 2, [12, 3400])
        #expect(try PostgresWire.numericText(&bytes, column: "price") == "-12.34")
    }

    /// A malformed numeric: what is wrong with it, and its parts.
    struct Malformed: Sendable, CustomTestStringConvertible {
        var why: String
        var count: Int16
        var sign: UInt16 = 0
        var scale: Int16 = 0
        var digits: [Int16] = []
        var testDescription: String { why }
    }

    @Test(
        "a malformed numeric throws .decodingFailed naming the column, never traps",
        arguments: [
            Malformed(why: "a negative digit count", count: -1),
            Malformed(why: "a negative scale", count: 1, scale: -4, digits: [1]),
            Malformed(why: "a digit above 9999", count: 1, digits: [12_000]),
            Malformed(why: "a negative digit", count: 1, digits: [-3]),
            Malformed(why: "fewer digits than it says", count: 3, digits: [1]),
            Malformed(why: "an unknown sign", count: 0, sign: 0x1234),
        ])
    func malformed(_ cell: Malformed) throws {
        var bytes = numeric(count: cell.count, weight: 0, sign: cell.sign, scale: cell.scale, cell.digits)
        let error = #expect(throws: DepotError.self) { try PostgresWire.numericText(&bytes, column: "price") }
        #expect(error?.kind == .decodingFailed)
        #expect(error?.message.contains("column price: malformed numeric") == true, "\(error?.message ?? "")")
    }

    @Test("a numeric cut short inside its header throws")
    func truncatedHeader() {
        var bytes = ByteBuffer()
        bytes.writeInteger(Int16(1))
        #expect(throws: DepotError.self) { try PostgresWire.numericText(&bytes, column: "price") }
    }
}
