import Foundation

/// One column of a ``Schema``: a key path to a stored attribute and the column's name.
///
/// ```swift
/// Column(\.latitude, "lat")
/// ```
/// The column's storage type and nullability follow the attribute's Swift type: `Double?` is a
/// nullable `double` column, `Decimal` an exact `decimal` one.
public struct Column<Root>: Sendable {
    /// The column's name in the table.
    public let name: String
    /// The storage type.
    public let type: ColumnType
    /// Whether the column accepts NULL.
    public let isNullable: Bool

    @usableFromInline let keyPath: KeyPathBox
    @usableFromInline let valueType: ObjectIdentifier
    /// The attribute's byte range inside `Root`, when it is a stored property.
    @usableFromInline let offset: Int?
    /// Reads the attribute of the value at `base` (a pointer to a `Root`).
    @usableFromInline let load: @Sendable (UnsafeRawPointer) -> StoredValue
    /// Reads the attribute through the key path (computed properties, classes).
    @usableFromInline let get: @Sendable (Root) -> StoredValue
    /// Initializes the attribute in place at `address` (already offset) from a stored value.
    @usableFromInline let initialize:
        @Sendable (UnsafeMutableRawPointer, StoredValue) throws(StoredValueMismatch) -> Void
    /// Deinitializes an attribute initialized by `initialize` (used when a later column fails).
    @usableFromInline let deinitialize: @Sendable (UnsafeMutableRawPointer) -> Void
    /// For a JSON column: encodes the attribute again, throwing what its `encode(to:)` throws
    /// (its stored value is the text `null` then). Writes call it only for cells holding `null`.
    @usableFromInline let encodingCheck: (@Sendable (Root) throws -> Void)?

    /// A column for the attribute at `keyPath`, named `name` in the table.
    ///
    /// Inlinable so the per-column closures are specialized where the attribute type is known
    /// (the entity's module): the bulk read and write loops then run without generic dispatch.
    @inlinable
    public init<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>, _ name: String) {
        self.name = name
        self.type = Value.columnType
        self.isNullable = Value.isNullable
        self.keyPath = KeyPathBox(keyPath)
        self.valueType = ObjectIdentifier(Value.self)
        let offset = MemoryLayout<Root>.offset(of: keyPath)
        self.offset = offset
        let byteOffset = offset ?? 0
        self.load = { base in
            base.advanced(by: byteOffset).assumingMemoryBound(to: Value.self).pointee.storedValue
        }
        let typedKeyPath = TypedKeyPathBox(keyPath: keyPath)
        self.get = { root in root[keyPath: typedKeyPath.keyPath].storedValue }
        self.initialize = { address, stored throws(StoredValueMismatch) in
            let value = try Value(storedValue: stored)
            address.initializeMemory(as: Value.self, to: value)
        }
        self.deinitialize = { address in
            address.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
        }
        // An optional JSON value casts to the protocol when it holds one.
        if Value.columnType == .json {
            self.encodingCheck = { @Sendable (root: Root) throws -> Void in
                if let json = root[keyPath: typedKeyPath.keyPath] as? any StorableAsJSON { _ = try json.jsonText() }
            }
        } else {
            self.encodingCheck = nil
        }
    }
}

/// An immutable key path, boxed so it can live in `Sendable` schemas.
@usableFromInline
struct KeyPathBox: @unchecked Sendable, Hashable {
    // Key paths are immutable once formed; AnyKeyPath is just not annotated Sendable.
    @usableFromInline let keyPath: AnyKeyPath
    @usableFromInline init(_ keyPath: AnyKeyPath) { self.keyPath = keyPath }
}

/// A typed key path, boxed for `@Sendable` closures.
@usableFromInline
struct TypedKeyPathBox<Root, Value>: @unchecked Sendable {
    // Key paths are immutable once formed; KeyPath is just not annotated Sendable.
    @usableFromInline let keyPath: KeyPath<Root, Value>
    @usableFromInline init(keyPath: KeyPath<Root, Value>) { self.keyPath = keyPath }
}

/// Collects the columns of a ``Schema``, in the order they are written.
///
/// The closure of ``Schema/init(_:primaryKey:columns:)`` is built with it: one ``Column`` per line.
/// `if`, `if`/`else` and `for` are accepted too; a schema that leaves out a stored property's
/// column then needs a `decode:` closure (see ``Schema/init(_:primaryKey:decode:columns:)``).
///
/// ```swift
/// static let schema = Schema<Airport>("airports", primaryKey: \.icao) {
///     Column(\.icao, "icao")
///     Column(\.name, "name")
///     Column(\.elevation, "elevation")
/// }
/// ```
@resultBuilder
public enum ColumnsBuilder<Root> {
    /// One column, as a list of one.
    public static func buildExpression(_ column: Column<Root>) -> [Column<Root>] { [column] }
    /// The lists of a block's lines, concatenated in order.
    public static func buildBlock(_ parts: [Column<Root>]...) -> [Column<Root>] { parts.flatMap { $0 } }
    /// The columns of each iteration of a `for` loop, concatenated in order.
    public static func buildArray(_ parts: [[Column<Root>]]) -> [Column<Root>] { parts.flatMap { $0 } }
    /// The columns of an `if` without `else`: none when the condition is false.
    public static func buildOptional(_ part: [Column<Root>]?) -> [Column<Root>] { part ?? [] }
    /// The columns of the `if` branch of an `if`/`else`.
    public static func buildEither(first: [Column<Root>]) -> [Column<Root>] { first }
    /// The columns of the `else` branch of an `if`/`else`.
    public static func buildEither(second: [Column<Root>]) -> [Column<Root>] { second }
}
