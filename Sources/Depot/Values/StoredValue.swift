import Foundation

/// A value as a store holds it: the common currency between Swift attributes and every backend.
///
/// Entities never deal with `StoredValue` directly: each attribute type converts itself
/// (see ``StorableValue``). Stores bind and read these values; the in-memory store compares them
/// with SQL semantics.
///
/// Equality and hashing are *byte-wise* for strings (`"é"` and `"e\u{301}"` differ), as in SQL,
/// unlike Swift's `String`, which compares canonically equivalent strings as equal.
public enum StoredValue: Sendable {
    /// SQL NULL: what a `nil` optional stores.
    case null
    /// A Boolean.
    case bool(Bool)
    /// A signed 64-bit integer (every Swift integer type is stored as one).
    case integer(Int64)
    /// A 64-bit floating-point number (`Float` is widened to it).
    case double(Double)
    /// An exact decimal number.
    case decimal(Decimal)
    /// Text (also URLs and JSON values).
    case text(String)
    /// Raw bytes.
    case blob(Data)
    /// A point in time, rounded to the microsecond by ``StorableValue`` conversions.
    case date(Date)
    /// A UUID.
    case uuid(UUID)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether this is a double or a decimal that is not a number (NaN), which Depot refuses to
    /// store or compare with: the engines store, compare and order NaN differently.
    public var isNotANumber: Bool {
        switch self {
        case .double(let number): number.isNaN
        case .decimal(let decimal): decimal.isNaN
        default: false
        }
    }

    /// The kind and a short excerpt of the value, for messages that may show data
    /// (decoding errors show what was found).
    public var excerpt: String {
        switch self {
        case .null: return "NULL"
        case .bool(let value): return "BOOLEAN \(value)"
        case .integer(let value): return "INTEGER \(value)"
        case .double(let value): return "REAL \(value)"
        case .decimal(let value): return "DECIMAL \(value)"
        case .text(let value):
            let short = value.count > 40 ? String(value.prefix(40)) + "…" : value
            return "TEXT '\(short)'"
        case .blob(let value): return "BLOB of \(value.count) bytes"
        case .date(let value): return "DATE \(value.timeIntervalSinceReferenceDate)"
        case .uuid(let value): return "UUID \(value.uuidString)"
        }
    }
}

extension StoredValue: Hashable {
    /// Whether two values are equal as a store compares them.
    ///
    /// Values of the same kind compare their payloads (text byte for byte). An integer and a
    /// double are equal when they hold exactly the same number (`.integer(1) == .double(1.0)`);
    /// any other pair of different kinds is unequal, so `.decimal(1) != .integer(1)`. `.null`
    /// equals `.null` here, unlike SQL's `=`.
    public static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.integer(let a), .double(let b)), (.double(let b), .integer(let a)):
            return Double(a) == b && Int64(exactly: b) == a
        case (.decimal(let a), .decimal(let b)): return a == b
        case (.text(var a), .text(var b)):
            // Byte equality (not canonical equivalence), compared as contiguous UTF-8 in one memcmp.
            guard a.utf8.count == b.utf8.count else { return false }
            return a.withUTF8 { x in
                b.withUTF8 { y in
                    guard let left = x.baseAddress, let right = y.baseAddress else { return true }  // both empty
                    return memcmp(left, right, x.count) == 0
                }
            }
        case (.blob(let a), .blob(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        default: return false
        }
    }

    /// Hashes the value consistently with `==`: an integer hashes as the equal double, text
    /// by its UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(Double(value))
        case .double(let value): hasher.combine(value)
        case .decimal(let value): hasher.combine(value)
        case .text(let value):
            var text = value
            // The length first: raw bytes carry no boundary, and composite keys ("ab", "c") and
            // ("a", "bc") must not hash alike.
            hasher.combine(text.utf8.count)
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let value): hasher.combine(value)
        case .date(let value): hasher.combine(value)
        case .uuid(let value): hasher.combine(value)
        }
    }
}
