import Foundation

/// A Swift type that can be stored in a column.
///
/// Depot ships conformances for `Bool`, the integer types up to 64 bits (`UInt64` excepted: it
/// does not fit a signed 64-bit column), `Float`, `Double`, `Decimal`, `String`, `Data`, `Date`,
/// `UUID`, `URL` and `Optional` of each. `RawRepresentable` types whose raw value is storable get
/// the conformance by declaring it:
///
/// ```swift
/// enum Surface: String, StorableValue { case asphalt, grass, gravel }
/// ```
///
/// Any other type converts to and from one of these through ``StorableAsPrimitive``, and
/// `Codable` types are stored as JSON through ``StorableAsJSON``.
public protocol StorableValue: Sendable {
    /// How the column is stored.
    static var columnType: ColumnType { get }
    /// Whether the column accepts NULL (true for `Optional`).
    static var isNullable: Bool { get }
    /// The stored form of this value.
    var storedValue: StoredValue { get }
    /// Decodes a stored value, throwing ``StoredValueMismatch`` when it does not fit.
    init(storedValue: StoredValue) throws(StoredValueMismatch)
}

extension StorableValue {
    public static var isNullable: Bool { false }
}

/// A stored value that does not fit the Swift type it should decode into.
///
/// Stores wrap it in a ``DepotError`` that names the entity, column and key.
public struct StoredValueMismatch: Error, Sendable, CustomStringConvertible {
    /// What was found, as kind and short excerpt ("TEXT 'abc'").
    public var found: String
    /// The Swift type that was expected.
    public var expected: String

    public init(found: StoredValue, expected: Any.Type) {
        self.found = found.excerpt
        self.expected = String(describing: expected)
    }

    public init(found: String, expected: String) {
        self.found = found
        self.expected = expected
    }

    public var description: String { "holds \(found), expected \(expected)" }
}

// MARK: - Optional

extension Optional: StorableValue where Wrapped: StorableValue {
    public static var columnType: ColumnType { Wrapped.columnType }
    public static var isNullable: Bool { true }

    @inlinable public var storedValue: StoredValue {
        switch self {
        case .none: .null
        case .some(let value): value.storedValue
        }
    }

    @inlinable public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        if case .null = storedValue {
            self = .none
        } else {
            self = .some(try Wrapped(storedValue: storedValue))
        }
    }
}

// MARK: - Numbers

extension Bool: StorableValue {
    public static var columnType: ColumnType { .bool }
    public var storedValue: StoredValue { .bool(self) }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .bool(let value): self = value
        case .integer(0): self = false
        case .integer(1): self = true
        default: throw StoredValueMismatch(found: storedValue, expected: Bool.self)
        }
    }
}

/// Integer types share one conversion: stored as a 64-bit integer, range-checked on the way back.
public protocol _StorableInteger: StorableValue, FixedWidthInteger {}

extension _StorableInteger {
    public static var columnType: ColumnType { .integer }
    @inlinable public var storedValue: StoredValue { .integer(Int64(self)) }
    @inlinable public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .integer(let value):
            guard let exact = Self(exactly: value) else {
                throw StoredValueMismatch(found: storedValue, expected: Self.self)
            }
            self = exact
        case .double(let value):
            guard let exact = Self(exactly: value) else {
                throw StoredValueMismatch(found: storedValue, expected: Self.self)
            }
            self = exact
        default:
            throw StoredValueMismatch(found: storedValue, expected: Self.self)
        }
    }
}

extension Int: _StorableInteger {}
extension Int8: _StorableInteger {}
extension Int16: _StorableInteger {}
extension Int32: _StorableInteger {}
extension Int64: _StorableInteger {}
extension UInt8: _StorableInteger {}
extension UInt16: _StorableInteger {}
extension UInt32: _StorableInteger {}

extension Double: StorableValue {
    public static var columnType: ColumnType { .double }
    @inlinable public var storedValue: StoredValue { .double(self) }
    @inlinable public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: throw StoredValueMismatch(found: storedValue, expected: Double.self)
        }
    }
}

extension Float: StorableValue {
    public static var columnType: ColumnType { .double }
    public var storedValue: StoredValue { .double(Double(self)) }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .double(let value): self = Float(value)
        case .integer(let value): self = Float(value)
        default: throw StoredValueMismatch(found: storedValue, expected: Float.self)
        }
    }
}

extension Decimal: StorableValue {
    public static var columnType: ColumnType { .decimal }
    public var storedValue: StoredValue { .decimal(self) }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .decimal(let value): self = value
        case .integer(let value): self = Decimal(value)
        case .text(let text):
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw StoredValueMismatch(found: storedValue, expected: Decimal.self)
            }
            self = value
        default: throw StoredValueMismatch(found: storedValue, expected: Decimal.self)
        }
    }
}

// MARK: - Text, bytes, identifiers, time

extension String: StorableValue {
    public static var columnType: ColumnType { .text }
    @inlinable public var storedValue: StoredValue { .text(self) }
    @inlinable public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        guard case .text(let value) = storedValue else {
            throw StoredValueMismatch(found: storedValue, expected: String.self)
        }
        self = value
    }
}

extension Data: StorableValue {
    public static var columnType: ColumnType { .blob }
    public var storedValue: StoredValue { .blob(self) }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        guard case .blob(let value) = storedValue else {
            throw StoredValueMismatch(found: storedValue, expected: Data.self)
        }
        self = value
    }
}

extension Date: StorableValue {
    public static var columnType: ColumnType { .date }
    /// The date rounded to the microsecond (``microseconds``): what every store keeps.
    public var storedValue: StoredValue { .date(Date(microseconds: microseconds)) }

    /// Microseconds since the reference date (2001-01-01 UTC), rounded to the nearest: the
    /// resolution Depot stores dates at on every backend (PostgreSQL's `timestamptz` holds
    /// microseconds), so a date reads back the same from every store.
    public var microseconds: Int64 {
        let interval = timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 9.2e12 else { return interval < 0 ? .min : .max }
        let seconds = interval.rounded(.down)
        return Int64(seconds) * 1_000_000 + Int64(((interval - seconds) * 1e6).rounded())
    }

    /// The date `microseconds` after the reference date (2001-01-01 UTC).
    public init(microseconds: Int64) {
        self.init(timeIntervalSinceReferenceDate: Double(microseconds) / 1e6)
    }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .date(let value): self = value
        case .double(let value): self = Date(timeIntervalSinceReferenceDate: value)
        default: throw StoredValueMismatch(found: storedValue, expected: Date.self)
        }
    }
}

extension UUID: StorableValue {
    public static var columnType: ColumnType { .uuid }
    public var storedValue: StoredValue { .uuid(self) }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .uuid(let value): self = value
        case .text(let text):
            guard let value = UUID(uuidString: text) else {
                throw StoredValueMismatch(found: storedValue, expected: UUID.self)
            }
            self = value
        default: throw StoredValueMismatch(found: storedValue, expected: UUID.self)
        }
    }
}

extension URL: StorableValue {
    public static var columnType: ColumnType { .url }
    public var storedValue: StoredValue { .text(absoluteString) }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        guard case .text(let text) = storedValue, let url = URL(string: text) else {
            throw StoredValueMismatch(found: storedValue, expected: URL.self)
        }
        self = url
    }
}

// MARK: - Enums, custom conversions, JSON

extension StorableValue where Self: RawRepresentable, RawValue: StorableValue {
    public static var columnType: ColumnType { RawValue.columnType }
    public var storedValue: StoredValue { rawValue.storedValue }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        let raw = try RawValue(storedValue: storedValue)
        guard let value = Self(rawValue: raw) else {
            throw StoredValueMismatch(found: storedValue, expected: Self.self)
        }
        self = value
    }
}

/// A type stored through a conversion to and from a storable primitive.
///
/// ```swift
/// struct Feet: StorableAsPrimitive {
///     var value: Double
///     init(primitive: Double) { value = primitive }
///     var primitive: Double { value }
/// }
/// ```
public protocol StorableAsPrimitive: StorableValue {
    associatedtype Primitive: StorableValue
    /// The stored form.
    var primitive: Primitive { get }
    /// Rebuilds the value from its stored form; throw to reject an invalid one.
    init(primitive: Primitive) throws
}

extension StorableAsPrimitive {
    public static var columnType: ColumnType { Primitive.columnType }
    public var storedValue: StoredValue { primitive.storedValue }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        let primitive = try Primitive(storedValue: storedValue)
        do {
            try self.init(primitive: primitive)
        } catch {
            throw StoredValueMismatch(found: storedValue, expected: Self.self)
        }
    }
}

/// A `Codable` type stored as JSON text (`jsonb` on PostgreSQL).
///
/// ```swift
/// struct Runway: Codable, Sendable, StorableAsJSON { var length: Int; var surface: String }
/// ```
/// Keys are written sorted, so equal values store equal text.
public protocol StorableAsJSON: StorableValue, Codable {}

extension StorableAsJSON {
    public static var columnType: ColumnType { .json }
    public var storedValue: StoredValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        // With non-finite floats handled, encoding fails only if the type's own encode(to:) throws.
        guard let data = try? encoder.encode(self), let text = String(data: data, encoding: .utf8) else {
            return .text("null")
        }
        return .text(text)
    }
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        let data: Data
        switch storedValue {
        case .text(let text): data = Data(text.utf8)
        case .blob(let bytes): data = bytes
        default: throw StoredValueMismatch(found: storedValue, expected: Self.self)
        }
        do {
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
            self = try decoder.decode(Self.self, from: data)
        } catch {
            throw StoredValueMismatch(
                found: "\(storedValue.excerpt) (\(error))", expected: String(describing: Self.self))
        }
    }
}
