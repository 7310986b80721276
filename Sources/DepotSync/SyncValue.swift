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
package enum SyncJSON {
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A key as canonical text (equal keys, equal text): what outbox rows are matched by.
    package static func keyText(_ key: some Collection<StoredValue>) throws -> String {
        try text(key.map(SyncValue.init))
    }

    package static func key(_ text: String) throws -> [StoredValue] {
        try JSONDecoder().decode([SyncValue].self, from: Data(text.utf8)).map(\.value)
    }

    package static func valuesText(_ values: [String: StoredValue]) throws -> String {
        try text(values.mapValues(SyncValue.init))
    }

    package static func values(_ text: String) throws -> [String: StoredValue] {
        try JSONDecoder().decode([String: SyncValue].self, from: Data(text.utf8)).mapValues(\.value)
    }

    private static func text(_ value: some Encodable) throws -> String {
        do {
            return String(decoding: try encoder().encode(value), as: UTF8.self)
        } catch {
            throw DepotError(.encodingFailed, "a value cannot be kept in the sync outbox: \(error)")
        }
    }
}
