import Depot
import DepotSQL
import Foundation
import NIOCore
import PostgresNIO

/// One value bound as a PostgreSQL parameter, in the binary format of its type (decimals as
/// text, which the server parses exactly).
struct PostgresParameter: PostgresDynamicTypeEncodable {
    let value: StoredValue

    var psqlType: PostgresDataType {
        switch value {
        case .null, .text: .text
        case .bool: .bool
        case .integer: .int8
        case .double: .float8
        case .decimal: .numeric
        case .blob: .bytea
        case .date: .timestamptz
        case .uuid: .uuid
        }
    }

    var psqlFormat: PostgresFormat {
        if case .decimal = value { return .text }
        return .binary
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        PostgresWire.write(value, into: &buffer)
    }
}

/// A column of a batch bound as one PostgreSQL array (binary format), for `UNNEST`.
struct PostgresArrayParameter: PostgresDynamicTypeEncodable {
    /// The rows of this statement, row after row (a slice of the batch, not a copy).
    let values: ArraySlice<StoredValue>
    /// The batch's width and this column's position in a row.
    let width: Int
    let position: Int
    /// The storage type of the column; decimals and JSON travel as text.
    let type: ColumnType

    var elementType: PostgresDataType {
        switch type {
        case .bool: .bool
        case .integer: .int8
        case .double: .float8
        case .decimal, .text, .url, .json: .text
        case .blob: .bytea
        case .date: .timestamptz
        case .uuid: .uuid
        }
    }

    var psqlType: PostgresDataType {
        switch elementType {
        case .bool: .boolArray
        case .int8: .int8Array
        case .float8: .float8Array
        case .bytea: .byteaArray
        case .timestamptz: .timestamptzArray
        case .uuid: .uuidArray
        default: .textArray
        }
    }

    var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        let count = values.count / width
        var hasNull = false
        var index = values.startIndex + position
        while index < values.endIndex {
            if case .null = values[index] {
                hasNull = true
                break
            }
            index += width
        }
        buffer.writeInteger(Int32(1))  // dimensions
        buffer.writeInteger(Int32(hasNull ? 1 : 0))
        buffer.writeInteger(elementType.rawValue)
        buffer.writeInteger(Int32(count))
        buffer.writeInteger(Int32(1))  // lower bound
        index = values.startIndex + position
        while index < values.endIndex {
            let value = values[index]
            index += width
            if case .null = value {
                buffer.writeInteger(Int32(-1))
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(Int32(0))
            let start = buffer.writerIndex
            PostgresWire.write(value, into: &buffer)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex)
        }
    }
}

/// PostgreSQL's binary wire formats for Depot's storage types.
enum PostgresWire {
    /// Microseconds between PostgreSQL's epoch (2000-01-01) and the reference date (2001-01-01).
    static let epochOffset: Int64 = 31_622_400_000_000

    static func write(_ value: StoredValue, into buffer: inout ByteBuffer) {
        switch value {
        case .null: break
        case .bool(let flag): buffer.writeInteger(UInt8(flag ? 1 : 0))
        case .integer(let number): buffer.writeInteger(number)
        case .double(let number): buffer.writeInteger(number.bitPattern)
        case .decimal(let decimal): buffer.writeString(decimal.description)
        case .text(let text): buffer.writeString(text)
        case .blob(let data): buffer.writeBytes(data)
        case .date(let date):
            let (sum, overflow) = date.microseconds.addingReportingOverflow(epochOffset)
            buffer.writeInteger(overflow ? Int64.max : sum)
        case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { _ = buffer.writeBytes($0) }
        }
    }

    /// The value of a result cell.
    ///
    /// - Throws: `DepotError` of kind `.decodingFailed` for a type Depot does not store.
    static func read(_ cell: PostgresCell) throws -> StoredValue {
        guard var bytes = cell.bytes else { return .null }
        guard cell.format == .binary else {
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        }
        switch cell.dataType {
        case .bool:
            return .bool((bytes.readInteger(as: UInt8.self) ?? 0) != 0)
        case .int8:
            return .integer(bytes.readInteger(as: Int64.self) ?? 0)
        case .int4:
            return .integer(Int64(bytes.readInteger(as: Int32.self) ?? 0))
        case .int2:
            return .integer(Int64(bytes.readInteger(as: Int16.self) ?? 0))
        case .float8:
            return .double(Double(bitPattern: bytes.readInteger(as: UInt64.self) ?? 0))
        case .float4:
            return .double(Double(Float(bitPattern: bytes.readInteger(as: UInt32.self) ?? 0)))
        case .numeric:
            let text = try numericText(&bytes, column: cell.columnName)
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DepotError(
                    .decodingFailed, "column \(cell.columnName): numeric \(text) does not fit a Decimal",
                    column: cell.columnName)
            }
            return .decimal(decimal)
        case .text, .varchar, .bpchar, .name, .json:
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        case .jsonb:
            _ = bytes.readInteger(as: UInt8.self)  // version
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        case .bytea:
            return .blob(Data(bytes.readableBytesView))
        case .timestamptz, .timestamp:
            let stored = bytes.readInteger(as: Int64.self) ?? 0
            return .date(Date(microseconds: stored &- epochOffset))
        case .uuid:
            guard let raw = bytes.readBytes(length: 16) else {
                throw DepotError(.decodingFailed, "column \(cell.columnName): malformed uuid", column: cell.columnName)
            }
            let uuid: uuid_t = (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11],
                raw[12], raw[13], raw[14], raw[15]
            )
            return .uuid(UUID(uuid: uuid))
        default:
            throw DepotError(
                .decodingFailed, "column \(cell.columnName): PostgreSQL type \(cell.dataType) is not one Depot stores",
                column: cell.columnName)
        }
    }

    /// The exact decimal text of a binary `numeric`: base-10,000 digits with a weight and a
    /// display scale.
    ///
    /// - Throws: `DepotError` of kind `.decodingFailed` naming `column` for bytes that are not a
    ///   numeric (too short, a negative digit count or scale, a digit outside 0…9999, an unknown
    ///   sign) and for infinities.
    static func numericText(_ bytes: inout ByteBuffer, column: String) throws(DepotError) -> String {
        func malformed(_ why: String) -> DepotError {
            DepotError(.decodingFailed, "column \(column): malformed numeric (\(why))", column: column)
        }
        guard let count = bytes.readInteger(as: Int16.self), let weight = bytes.readInteger(as: Int16.self),
            let sign = bytes.readInteger(as: UInt16.self), let scale = bytes.readInteger(as: Int16.self)
        else { throw malformed("shorter than its header") }
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000, 0xF000:
            throw DepotError(.decodingFailed, "column \(column): infinite numeric has no Decimal", column: column)
        case 0x0000, 0x4000: break
        default: throw malformed("sign 0x\(String(sign, radix: 16))")
        }
        guard count >= 0, scale >= 0 else { throw malformed("\(count) digits, scale \(scale)") }
        var groups: [Int16] = []
        for _ in 0..<Int(count) {
            guard let group = bytes.readInteger(as: Int16.self) else { throw malformed("fewer digits than it says") }
            guard (0...9999).contains(group) else { throw malformed("digit \(group)") }
            groups.append(group)
        }
        // Integer part: groups 0...weight; fraction: the rest, cut to `scale` digits.
        var integer = ""
        var fraction = ""
        let integerGroups = Int(weight) + 1
        for position in 0..<max(integerGroups, 0) {
            let group = position < groups.count ? groups[position] : 0
            integer += position == 0 ? String(group) : pad(group)
        }
        if integer.isEmpty { integer = "0" }
        if integerGroups < 0 { fraction = String(repeating: "0000", count: -integerGroups) }
        for position in groups.indices where position >= integerGroups {
            fraction += pad(groups[position])
        }
        if fraction.count < Int(scale) {
            fraction += String(repeating: "0", count: Int(scale) - fraction.count)
        } else {
            fraction = String(fraction.prefix(Int(scale)))
        }
        let magnitude = fraction.isEmpty ? integer : integer + "." + fraction
        return sign == 0x4000 ? "-" + magnitude : magnitude
    }

    private static func pad(_ group: Int16) -> String {
        let digits = String(group)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
