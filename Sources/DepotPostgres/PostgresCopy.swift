import Depot
import Foundation
import NIOCore

/// `COPY … FROM STDIN`, PostgreSQL's bulk path, for large batches: rows stream as text lines
/// (the format PostgresNIO 1.33 can send), about twice as fast as the same rows bound as arrays.
///
/// Inserts copy straight into the table; upserts copy into a temporary table first, then run the
/// same `INSERT … ON CONFLICT` the array path runs, from it. Every value reads back as the array
/// path's binary values do: the text of each is exact (shortest round-trip doubles, decimals'
/// own text, dates to the microsecond in UTC), which the conformance suite checks on both paths.
enum PostgresCopy {
    /// Batches of fewer rows take the array path: `COPY` costs a round trip more. Measured by hand
    /// on both sides, each batch in its own transaction (`depot-bench --only "pg batches"`): arrays
    /// win at 50–100 rows, the two tie from 250 to 1,000, and `COPY` takes 0.6× the time at 100,000.
    static let minimumRows = 500

    /// Bytes gathered before they are sent.
    static let chunkBytes = 1 << 20

    /// Rows per `COPY` (and per statement from the staging table): a million-row write is ten
    /// statements, not one that a `statement_timeout` the array path stayed under would cancel.
    static let rowsPerStatement = 100_000

    /// The temporary table an upsert or update of `columns` of `table` copies its rows into:
    /// `depot stage ` and a hash of the two. The space keeps it apart from every table a `Schema`
    /// can name (identifiers only), which a plain name would not: the statement writing from it
    /// names the real table unqualified, and temporary tables come first on the search path.
    static func stagingTable(for table: TableDescription, columns: [String]) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        for byte in ([table.name] + columns).joined(separator: "\u{0}").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return "depot stage " + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Whether a batch goes through `COPY`: large enough, and names PostgresNIO can quote (it
    /// wraps them in double quotes without doubling any inside; a `Schema` admits identifiers
    /// only, so this holds for every Depot table, and keeps holding should that change).
    static func suits(_ rows: RowBatch, table: TableDescription) -> Bool {
        rows.count >= minimumRows && !table.name.contains("\"") && !rows.columns.contains { $0.contains("\"") }
    }

    /// Appends the rows of `slice` of `rows`, in COPY's text format, calling `flush` with each
    /// full chunk.
    static func encode(
        _ rows: RowBatch, _ slice: Range<Int>, flush: (inout ByteBuffer) async throws -> Void
    ) async throws {
        let width = rows.columns.count
        var buffer = ByteBuffer()
        buffer.reserveCapacity(chunkBytes + chunkBytes / 4)
        var column = 0
        for value in rows.values[(slice.lowerBound * width)..<(slice.upperBound * width)] {
            try write(value, into: &buffer)
            column += 1
            if column == width {
                column = 0
                buffer.writeInteger(UInt8(ascii: "\n"))
                if buffer.readableBytes >= chunkBytes { try await flush(&buffer) }
            } else {
                buffer.writeInteger(UInt8(ascii: "\t"))
            }
        }
        if buffer.readableBytes > 0 { try await flush(&buffer) }
    }

    /// One value as COPY's text format spells it.
    static func write(_ value: StoredValue, into buffer: inout ByteBuffer) throws(FoundNUL) {
        switch value {
        case .null: buffer.writeStaticString("\\N")
        case .bool(let flag): buffer.writeInteger(UInt8(ascii: flag ? "t" : "f"))
        case .integer(let number): writeDecimal(number, into: &buffer)
        case .double(let number):
            if number.isNaN {
                buffer.writeStaticString("NaN")
            } else if number.isInfinite {
                buffer.writeStaticString(number < 0 ? "-Infinity" : "Infinity")
            } else {
                // Swift prints the shortest digits that read back as the same double.
                buffer.writeString(number.description)
            }
        case .decimal(let decimal): buffer.writeString(decimal.description)
        case .text(let text): try writeEscaped(text, into: &buffer)
        case .blob(let data):
            // bytea's hex input, its backslash doubled for COPY.
            buffer.writeStaticString("\\\\x")
            for byte in data {
                buffer.writeInteger(hexDigits[Int(byte >> 4)])
                buffer.writeInteger(hexDigits[Int(byte & 0xF)])
            }
        case .date(let date): writeTimestamp(date, into: &buffer)
        case .uuid(let uuid): buffer.writeString(uuid.uuidString)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// A text held U+0000, which PostgreSQL text cannot store: the copy stops (the server writes
    /// nothing of it) and the writer names the row and column.
    struct FoundNUL: Error {}

    /// Text with the bytes COPY's text format reserves escaped (backslash, tab, newline,
    /// carriage return).
    ///
    /// - Throws: ``FoundNUL`` for a text holding U+0000: the scan for bytes to escape finds it,
    ///   so the array path's separate pass over the batch is not needed here.
    static func writeEscaped(_ text: String, into buffer: inout ByteBuffer) throws(FoundNUL) {
        let utf8 = text.utf8
        let plain = utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 == UInt8(ascii: "\\") || $0 == 9 || $0 == 10 || $0 == 13 || $0 == 0 }
        }
        if plain ?? !utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == 9 || $0 == 10 || $0 == 13 || $0 == 0 }) {
            buffer.writeString(text)
            return
        }
        for byte in utf8 {
            switch byte {
            case 0: throw FoundNUL()
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case 9: buffer.writeStaticString("\\t")
            case 10: buffer.writeStaticString("\\n")
            case 13: buffer.writeStaticString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }

    /// A signed integer in decimal digits, without a String in between.
    static func writeDecimal(_ number: Int64, into buffer: inout ByteBuffer) {
        if number < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        let count = withUnsafeMutableBytes(of: &digits) { raw -> Int in
            var end = raw.count
            repeat {
                end -= 1
                raw[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            return raw.count - end
        }
        withUnsafeBytes(of: &digits) { raw in _ = buffer.writeBytes(raw[(raw.count - count)...]) }
    }

    /// A `timestamptz` in UTC to the microsecond, from the same microsecond count the binary path
    /// sends: `2024-02-29 13:05:09.000001+00`, years before 1 as `… BC`, and `infinity` where the
    /// binary path sends PostgreSQL's (a count past `Int64`); the binary path never sends
    /// `-infinity` (the earliest count it can send is out of range, as its text is here).
    static func writeTimestamp(_ date: Date, into buffer: inout ByteBuffer) {
        let (sinceY2K, overflow) = date.microseconds.addingReportingOverflow(PostgresWire.epochOffset)
        if overflow || sinceY2K == .max {
            buffer.writeStaticString("infinity")
            return
        }
        let perDay: Int64 = 86_400_000_000
        var days = sinceY2K / perDay
        var inDay = sinceY2K % perDay
        if inDay < 0 {
            days -= 1
            inDay += perDay
        }
        let (year, month, day) = CivilDate.date(daysSince1970: days + 10_957)
        // PostgreSQL has no year 0: astronomical year 0 is 1 BC.
        let shownYear = year > 0 ? year : 1 - year
        func padded(_ number: Int64, _ width: Int) {
            let text = String(number)
            for _ in text.utf8.count..<max(width, text.utf8.count) { buffer.writeInteger(UInt8(ascii: "0")) }
            buffer.writeString(text)
        }
        padded(shownYear, 4)
        buffer.writeInteger(UInt8(ascii: "-"))
        padded(month, 2)
        buffer.writeInteger(UInt8(ascii: "-"))
        padded(day, 2)
        buffer.writeInteger(UInt8(ascii: " "))
        let seconds = inDay / 1_000_000
        padded(seconds / 3_600, 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        padded(seconds / 60 % 60, 2)
        buffer.writeInteger(UInt8(ascii: ":"))
        padded(seconds % 60, 2)
        buffer.writeInteger(UInt8(ascii: "."))
        padded(inDay % 1_000_000, 6)
        buffer.writeStaticString("+00")
        if year <= 0 { buffer.writeStaticString(" BC") }
    }
}
