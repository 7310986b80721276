/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Repeated fields (`Set-Cookie`) keep every value, in order.
///
/// ```swift
/// var headers: HeaderFields = ["Accept": "application/json"]
/// headers["X-Request-ID"] = "42"
/// headers["accept"]  // "application/json"
/// headers.add("Set-Cookie", "a=1")
/// ```
public struct HeaderFields: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The fields in order, with their names as given.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No fields.
    public init() {}

    /// Fields in the order given.
    public init(_ fields: some Sequence<(name: String, value: String)>) {
        self.fields = Array(fields)
    }

    /// Fields from a literal, in the order written: `["Accept": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of the field named `name` (any case); setting replaces every value of
    /// the field, `nil` removes it.
    public subscript(name: String) -> String? {
        get { fields.first { Self.matches($0.name, name) }?.value }
        set {
            guard let newValue else {
                remove(name)
                return
            }
            if let index = fields.firstIndex(where: { Self.matches($0.name, name) }) {
                let kept = fields[index].name
                remove(name)
                fields.insert((name: kept, value: newValue), at: index)
            } else {
                fields.append((name: name, value: newValue))
            }
        }
    }

    /// Every value of the field named `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.matches($0.name, name) }.map(\.value)
    }

    /// Whether a field named `name` (any case) is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.matches($0.name, name) }
    }

    /// Appends a field, keeping the values already present under that name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// The request fields that carry credentials whoever set them, lowercased: `authorization`,
    /// `proxy-authorization`, `cookie`. Logging redacts them; a redirect to another origin drops them.
    public static let credentials: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Removes every field named `name` (any case).
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.matches($0.name, name) }
    }

    /// Adds the fields of `other`, replacing fields of the same names.
    public mutating func merge(_ other: HeaderFields) {
        for name in Set(other.fields.map { $0.name.lowercased() }) { remove(name) }
        fields.append(contentsOf: other.fields)
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether both hold the same fields in the same order: names compared case-insensitively, values
    /// exactly.
    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { matches($0.name, $1.name) && $0.value == $1.value }
    }

    /// Hashes the fields in order, names lowercased, so that equal field lists hash alike.
    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }

    /// Field names are ASCII tokens: compare them ASCII-case-insensitively, without allocating.
    static func matches(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { left, right in
            if left == right { return true }
            let lower = left | 0x20
            return lower == right | 0x20 && lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")
        }
    }
}

extension HeaderFields: Sequence {
    /// An iterator over the fields, in order, with their names as given.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}
