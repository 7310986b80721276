/// A member of a partial response: absent, explicitly `null`, or a value.
///
/// `Codable` alone cannot tell a missing key from `null`. Wrap optional members in `@Field` and
/// the synthesized `Decodable` conformance keeps the difference:
///
/// ```swift
/// struct UserDTO: Decodable, Sendable {
///     let id: Int
///     @Field var name: String?
///     @Field var isOnline: Bool?
/// }
/// // {"id": 1, "isOnline": null}  →  name is .absent, isOnline is .null
/// let dto = try JSONDecoder().decode(UserDTO.self, from: json)
/// dto.name          // nil (read as a plain optional)
/// dto.$isOnline     // .null  (the three states, through the projected value)
/// ```
///
/// `Encodable` leaves absent members out, so the same type can build PATCH bodies.
/// Build patches from fields with ``Patch``'s `set(_:_:)`: absent leaves the stored column alone,
/// null clears it, a value sets it.
@propertyWrapper
public enum Field<Value> {
    /// The member was not in the payload.
    case absent
    /// The member was present and `null`.
    case null
    /// The member was present with a value.
    case value(Value)

    /// An absent field.
    public init() { self = .absent }

    /// A field holding `wrappedValue`, or `null` when it is `nil`.
    public init(wrappedValue: Value?) {
        self = wrappedValue.map(Field.value) ?? .null
    }

    /// The value, or `nil` when absent or null. Setting `nil` makes the field `null`.
    public var wrappedValue: Value? {
        get {
            if case .value(let value) = self { return value }
            return nil
        }
        set { self = newValue.map(Field.value) ?? .null }
    }

    /// The field itself, with its three states.
    public var projectedValue: Field<Value> {
        get { self }
        set { self = newValue }
    }

    /// Whether the member was in the payload (as a value or as `null`).
    public var isPresent: Bool {
        if case .absent = self { return false }
        return true
    }
}

extension Field: Sendable where Value: Sendable {}
extension Field: Equatable where Value: Equatable {}
extension Field: Hashable where Value: Hashable {}

extension Field: Decodable where Value: Decodable {
    /// Decodes `null` or a value; a missing key never reaches here (see the container overload).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .null : .value(try container.decode(Value.self))
    }
}

extension Field: Encodable where Value: Encodable {
    /// Encodes the value or `null`; an absent field is skipped by its keyed container.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .absent, .null: try container.encodeNil()
        case .value(let value): try container.encode(value)
        }
    }
}

extension KeyedDecodingContainer {
    /// Decodes a ``Field``: a missing key is `.absent` instead of an error. Synthesized
    /// `init(from:)` calls this overload for `@Field` members.
    ///
    /// - Throws: `DecodingError` when the key holds something that is neither `null` nor a `Value`.
    public func decode<Value: Decodable>(_ type: Field<Value>.Type, forKey key: Key) throws -> Field<Value> {
        guard contains(key) else { return .absent }
        return try decodeIfPresent(type, forKey: key) ?? .null
    }
}

extension KeyedEncodingContainer {
    /// Encodes a ``Field``, leaving the key out when it is absent. Synthesized `encode(to:)`
    /// calls this overload for `@Field` members.
    public mutating func encode<Value: Encodable>(_ value: Field<Value>, forKey key: Key) throws {
        switch value {
        case .absent: return
        case .null: try encodeNil(forKey: key)
        case .value(let wrapped): try encode(wrapped, forKey: key)
        }
    }
}
