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
    /// `false`: a column is NOT NULL unless its attribute is `Optional`.
    public static var isNullable: Bool { false }
}

/// A stored value that does not fit the Swift type it should decode into.
///
/// Stores wrap it in a ``DepotError`` of kind ``DepotError/Kind/decodingFailed`` that names the
/// entity, column and key. Throw it from a custom conversion to reject a value:
///
/// ```swift
/// guard case .text(let code) = storedValue, code.count == 4 else {
///     throw StoredValueMismatch(found: storedValue, expected: ICAOCode.self)
/// }
/// ```
public struct StoredValueMismatch: Error, Sendable, CustomStringConvertible {
    /// What was found, as kind and short excerpt ("TEXT 'abc'").
    public var found: String
    /// The Swift type that was expected.
    public var expected: String

    /// A mismatch between `found` (shown as ``StoredValue/excerpt``) and the Swift type `expected`.
    public init(found: StoredValue, expected: Any.Type) {
        self.found = found.excerpt
        self.expected = String(describing: expected)
    }

    /// A mismatch described in your own words: `found` as kind and excerpt, `expected` as a type name.
    public init(found: String, expected: String) {
        self.found = found
        self.expected = expected
    }

    /// "holds TEXT 'abc', expected Int": what decoding error messages quote.
    public var description: String { "holds \(found), expected \(expected)" }
}

// MARK: - Optional

extension Optional: StorableValue where Wrapped: StorableValue {
    /// The wrapped type's column type.
    public static var columnType: ColumnType { Wrapped.columnType }
    /// `true`: an optional attribute is a nullable column.
    public static var isNullable: Bool { true }

    /// ``StoredValue/null`` for `nil`, the wrapped value's stored form otherwise.
    @inlinable public var storedValue: StoredValue {
        switch self {
        case .none: .null
        case .some(let value): value.storedValue
        }
    }

    /// `nil` for ``StoredValue/null``; otherwise the wrapped type's decoding, which may throw.
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
    /// ``ColumnType/bool``.
    public static var columnType: ColumnType { .bool }
    /// ``StoredValue/bool(_:)``.
    public var storedValue: StoredValue { .bool(self) }
    /// Accepts a Boolean, or the integer 0 or 1 (how SQLite reads a `BOOLEAN` back); throws for
    /// anything else.
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
    /// ``ColumnType/integer``, whatever the width.
    public static var columnType: ColumnType { .integer }
    /// The value widened to ``StoredValue/integer(_:)``.
    @inlinable public var storedValue: StoredValue { .integer(Int64(self)) }
    /// Accepts an integer, or a double holding a whole number, that fits this type exactly;
    /// throws for anything else (an `Int8` column holding 300, a double holding 2.5).
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
    /// ``ColumnType/double``.
    public static var columnType: ColumnType { .double }
    /// ``StoredValue/double(_:)``; −0.0 is stored as 0.0, as SQLite stores it, so that every store
    /// holds and orders it alike.
    @inlinable public var storedValue: StoredValue { .double(self + 0.0) }  // -0.0 + 0.0 == +0.0
    /// Accepts a double, or an integer (converted, rounding beyond 2^53); throws for anything else.
    @inlinable public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        default: throw StoredValueMismatch(found: storedValue, expected: Double.self)
        }
    }
}

extension Float: StorableValue {
    /// ``ColumnType/double``: a `Float` is stored widened to 64 bits.
    public static var columnType: ColumnType { .double }
    /// The value widened to ``StoredValue/double(_:)``; −0.0 is stored as 0.0.
    public var storedValue: StoredValue { .double(Double(self) + 0.0) }
    /// Accepts a double or an integer, rounded to the nearest `Float`; throws for anything else.
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .double(let value): self = Float(value)
        case .integer(let value): self = Float(value)
        default: throw StoredValueMismatch(found: storedValue, expected: Float.self)
        }
    }
}

extension Decimal: StorableValue {
    /// ``ColumnType/decimal``: exact digits on every store.
    public static var columnType: ColumnType { .decimal }
    /// ``StoredValue/decimal(_:)``.
    public var storedValue: StoredValue { .decimal(self) }
    /// Accepts a decimal, an integer, or text spelling a number in the POSIX locale (`"12.50"`);
    /// throws for anything else, doubles included (they are not exact).
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
    /// ``ColumnType/text``.
    public static var columnType: ColumnType { .text }
    /// ``StoredValue/text(_:)``, the string as it is (not normalized).
    @inlinable public var storedValue: StoredValue { .text(self) }
    /// Accepts text only; throws for anything else (numbers are not turned into text).
    @inlinable public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        guard case .text(let value) = storedValue else {
            throw StoredValueMismatch(found: storedValue, expected: String.self)
        }
        self = value
    }
}

extension Data: StorableValue {
    /// ``ColumnType/blob``.
    public static var columnType: ColumnType { .blob }
    /// ``StoredValue/blob(_:)``.
    public var storedValue: StoredValue { .blob(self) }
    /// Accepts bytes only; throws for anything else.
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        guard case .blob(let value) = storedValue else {
            throw StoredValueMismatch(found: storedValue, expected: Data.self)
        }
        self = value
    }
}

extension Date: StorableValue {
    /// ``ColumnType/date``.
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

    /// Accepts a date, or a double counting seconds since the reference date (2001-01-01 UTC);
    /// throws for anything else.
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        switch storedValue {
        case .date(let value): self = value
        case .double(let value): self = Date(timeIntervalSinceReferenceDate: value)
        default: throw StoredValueMismatch(found: storedValue, expected: Date.self)
        }
    }
}

extension UUID: StorableValue {
    /// ``ColumnType/uuid``.
    public static var columnType: ColumnType { .uuid }
    /// ``StoredValue/uuid(_:)``.
    public var storedValue: StoredValue { .uuid(self) }
    /// Accepts a UUID, or text spelling one (`"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"`); throws
    /// for anything else.
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
    /// ``ColumnType/url``.
    public static var columnType: ColumnType { .url }
    /// The URL's `absoluteString`, as ``StoredValue/text(_:)``.
    public var storedValue: StoredValue { .text(absoluteString) }
    /// Accepts text that `URL(string:)` parses; throws for anything else.
    public init(storedValue: StoredValue) throws(StoredValueMismatch) {
        guard case .text(let text) = storedValue, let url = URL(string: text) else {
            throw StoredValueMismatch(found: storedValue, expected: URL.self)
        }
        self = url
    }
}

// MARK: - Enums, custom conversions, JSON

extension StorableValue where Self: RawRepresentable, RawValue: StorableValue {
    /// The raw value's column type: a `String`-backed enum is a text column.
    public static var columnType: ColumnType { RawValue.columnType }
    /// The raw value's stored form.
    public var storedValue: StoredValue { rawValue.storedValue }
    /// Decodes the raw value, then the case; throws when either does not fit (an unknown raw
    /// value, such as a case removed from the enum, included).
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
    /// The primitive's column type.
    public static var columnType: ColumnType { Primitive.columnType }
    /// The stored form of ``primitive``.
    public var storedValue: StoredValue { primitive.storedValue }
    /// Decodes the primitive, then calls ``init(primitive:)``; any error that initializer throws
    /// becomes a ``StoredValueMismatch`` naming this type.
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
    /// ``ColumnType/json``.
    public static var columnType: ColumnType { .json }
    /// The value as JSON text with sorted keys; non-finite floats are written as the strings
    /// `"+Infinity"`, `"-Infinity"` and `"NaN"`.
    ///
    /// If the type's own `encode(to:)` throws, this is the text `null`, and writing an entity
    /// (or a patch) holding the value fails with `DepotError` of kind `.encodingFailed`, naming
    /// the entity, the column and the row, before anything is written: see ``jsonText()``.
    public var storedValue: StoredValue {
        guard let text = try? jsonText() else { return .text("null") }
        return .text(text)
    }

    /// The value as the JSON text `storedValue` holds.
    ///
    /// ```swift
    /// try Runway(length: 3600, surface: "asphalt").jsonText()  // {"length":3600,"surface":"asphalt"}
    /// ```
    ///
    /// - Throws: What the type's own `encode(to:)` throws.
    public func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        // With non-finite floats handled, encoding fails only if the type's own encode(to:) throws.
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// Decodes JSON from text or bytes (non-finite floats as written by ``storedValue``); throws
    /// a ``StoredValueMismatch`` quoting the decoder's error for anything else.
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
