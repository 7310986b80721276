import Depot
import Foundation

/// A `StoredValue` in JSON, tagged with its kind so that it reads back exactly: how the outbox
/// keeps keys, changed values and bases in a text column on every store.
///
/// `null` is JSON `null`; every other value is a one-member object: `{"text": "Oslo"}`,
/// `{"int": 42}`, `{"real": 1.5}` (`{"real": "Infinity"}`, `{"real": "-Infinity"}`), `{"bool": true}`, `{"decimal": "1.10"}`, `{"blob": "AAE="}`,
/// `{"date": 733449600.5}` (seconds since 2001), `{"uuid": "…"}`.
package struct SyncValue: Codable, Hashable, Sendable {
    package var value: StoredValue

    package init(_ value: StoredValue) { self.value = value }

    private enum Tag: String, CodingKey {
        case text, int, real, bool, decimal, blob, date, uuid
    }

    package init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            value = .null
            return
        }
        let container = try decoder.container(keyedBy: Tag.self)
        guard let tag = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a stored value is one tagged member"))
        }
        switch tag {
        case .text: value = .text(try container.decode(String.self, forKey: tag))
        case .int: value = .integer(try container.decode(Int64.self, forKey: tag))
        case .real:
            // Infinities as text: JSON has no number for them.
            if let text = try? container.decode(String.self, forKey: tag) {
                guard let infinity = ["Infinity": Double.infinity, "-Infinity": -Double.infinity][text] else {
                    throw DecodingError.dataCorruptedError(
                        forKey: tag, in: container, debugDescription: "'\(text)' is not a real number")
                }
                value = .double(infinity)
            } else {
                value = .double(try container.decode(Double.self, forKey: tag))
            }
        case .bool: value = .bool(try container.decode(Bool.self, forKey: tag))
        case .decimal:
            let text = try container.decode(String.self, forKey: tag)
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorruptedError(
                    forKey: tag, in: container, debugDescription: "'\(text)' is not a decimal")
            }
            value = .decimal(decimal)
        case .blob: value = .blob(try container.decode(Data.self, forKey: tag))
        case .date: value = .date(Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: tag)))
        case .uuid: value = .uuid(try container.decode(UUID.self, forKey: tag))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        if case .null = value {
            var single = encoder.singleValueContainer()
            try single.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: Tag.self)
        switch value {
        case .null: break
        case .text(let text): try container.encode(text, forKey: .text)
        case .integer(let integer): try container.encode(integer, forKey: .int)
        case .double(let double) where double.isInfinite:
            try container.encode(double < 0 ? "-Infinity" : "Infinity", forKey: .real)
        case .double(let double): try container.encode(double, forKey: .real)
        case .bool(let bool): try container.encode(bool, forKey: .bool)
        case .decimal(let decimal): try container.encode("\(decimal)", forKey: .decimal)
        case .blob(let data): try container.encode(data, forKey: .blob)
        case .date(let date): try container.encode(date.timeIntervalSinceReferenceDate, forKey: .date)
        case .uuid(let uuid): try container.encode(uuid, forKey: .uuid)
        }
    }
}

/// JSON text for the outbox's columns, and back.
///
/// Keys and values are written by hand, byte for byte as `JSONEncoder` (with `.sortedKeys`)
/// writes ``SyncValue``s: key texts already stored (outbox entries, row versions, shadows) must
/// keep matching the texts of the same keys written now. The encoder took most of a recorded
/// edit's own time. `SyncJSONTests` holds the two to the same bytes.
package enum SyncJSON {
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A key as canonical text (equal keys, equal text): what outbox rows are matched by.
    package static func keyText(_ key: some Collection<StoredValue>) throws -> String {
        var json = JSONText()
        json.bytes.append(UInt8(ascii: "["))
        var first = true
        for value in key {
            if !first { json.bytes.append(UInt8(ascii: ",")) }
            first = false
            try json.append(value)
        }
        json.bytes.append(UInt8(ascii: "]"))
        return json.text
    }

    package static func key(_ text: String) throws -> [StoredValue] {
        try JSONDecoder().decode([SyncValue].self, from: Data(text.utf8)).map(\.value)
    }

    /// Values by column name, the names in the order of their UTF-8 bytes (as `.sortedKeys` puts
    /// them).
    package static func valuesText(_ values: [String: StoredValue]) throws -> String {
        var json = JSONText()
        json.bytes.append(UInt8(ascii: "{"))
        var first = true
        for (name, value) in values.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            if !first { json.bytes.append(UInt8(ascii: ",")) }
            first = false
            json.appendString(name)
            json.bytes.append(UInt8(ascii: ":"))
            try json.append(value)
        }
        json.bytes.append(UInt8(ascii: "}"))
        return json.text
    }

    package static func values(_ text: String) throws -> [String: StoredValue] {
        try JSONDecoder().decode([String: SyncValue].self, from: Data(text.utf8)).mapValues(\.value)
    }
}

/// JSON being written: ``SyncValue``'s tagged members, strings escaped as `JSONEncoder` escapes
/// them (`/` too), numbers as it spells them.
private struct JSONText {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(64) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `value` as ``SyncValue`` encodes it.
    mutating func append(_ value: StoredValue) throws(DepotError) {
        switch value {
        case .null:
            bytes.append(contentsOf: "null".utf8)
            return
        case .text(let text):
            open("text")
            appendString(text)
        case .integer(let integer):
            open("int")
            bytes.append(contentsOf: String(integer).utf8)
        case .double(let double) where double.isInfinite:
            open("real")
            appendString(double < 0 ? "-Infinity" : "Infinity")
        case .double(let double):
            open("real")
            try appendNumber(double)
        case .bool(let bool):
            open("bool")
            bytes.append(contentsOf: (bool ? "true" : "false").utf8)
        case .decimal(let decimal):
            open("decimal")
            appendString("\(decimal)")
        case .blob(let data):
            open("blob")
            appendString(data.base64EncodedString())
        case .date(let date):
            open("date")
            try appendNumber(date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid):
            open("uuid")
            appendString(uuid.uuidString)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `{"tag":`
    private mutating func open(_ tag: StaticString) {
        bytes.append(UInt8(ascii: "{"))
        bytes.append(UInt8(ascii: "\""))
        tag.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A finite number as `JSONEncoder` spells it: Swift's shortest description, without a
    /// trailing `.0`.
    private mutating func appendNumber(_ number: Double) throws(DepotError) {
        guard number.isFinite else {
            throw DepotError(
                .encodingFailed, "a value cannot be kept in the sync outbox: \(number) is not a JSON number")
        }
        let text = number.description
        bytes.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
    }

    /// A string, quoted and escaped: `"`, `\`, `/`, and control characters (`\b`, `\f`, `\n`,
    /// `\r`, `\t`, others as `\u00xx`); everything else as its UTF-8 bytes.
    mutating func appendString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
