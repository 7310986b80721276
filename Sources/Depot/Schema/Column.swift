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

    let keyPath: KeyPathBox
    let valueType: ObjectIdentifier
    let valueTypeName: String
    /// The attribute's byte range inside `Root`, when it is a stored property.
    let offset: Int?
    let size: Int
    /// Reads the attribute of the value at `base` (a pointer to a `Root`).
    let load: @Sendable (UnsafeRawPointer) -> StoredValue
    /// Reads the attribute through the key path (computed properties, classes).
    let get: @Sendable (Root) -> StoredValue
    /// Initializes the attribute in place at `address` (already offset) from a stored value.
    let initialize: @Sendable (UnsafeMutableRawPointer, StoredValue) throws(StoredValueMismatch) -> Void
    /// Deinitializes an attribute initialized by `initialize` (used when a later column fails).
    let deinitialize: @Sendable (UnsafeMutableRawPointer) -> Void
    /// Decodes a stored value to the attribute type and back, checking that it fits.
    let check: @Sendable (StoredValue) throws(StoredValueMismatch) -> Void

    /// A column for the attribute at `keyPath`, named `name` in the table.
    public init<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>, _ name: String) {
        self.name = name
        self.type = Value.columnType
        self.isNullable = Value.isNullable
        self.keyPath = KeyPathBox(keyPath)
        self.valueType = ObjectIdentifier(Value.self)
        self.valueTypeName = String(describing: Value.self)
        let offset = MemoryLayout<Root>.offset(of: keyPath)
        self.offset = offset
        self.size = MemoryLayout<Value>.size
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
        self.check = { stored throws(StoredValueMismatch) in _ = try Value(storedValue: stored) }
    }
}

/// An immutable key path, boxed so it can live in `Sendable` schemas.
struct KeyPathBox: @unchecked Sendable, Hashable {
    // Key paths are immutable once formed; AnyKeyPath is just not annotated Sendable.
    let keyPath: AnyKeyPath
    init(_ keyPath: AnyKeyPath) { self.keyPath = keyPath }
}

/// A typed key path, boxed for `@Sendable` closures.
struct TypedKeyPathBox<Root, Value>: @unchecked Sendable {
    // Key paths are immutable once formed; KeyPath is just not annotated Sendable.
    let keyPath: KeyPath<Root, Value>
}

/// Collects the columns of a ``Schema``.
@resultBuilder
public enum ColumnsBuilder<Root> {
    public static func buildExpression(_ column: Column<Root>) -> [Column<Root>] { [column] }
    public static func buildBlock(_ parts: [Column<Root>]...) -> [Column<Root>] { parts.flatMap { $0 } }
    public static func buildArray(_ parts: [[Column<Root>]]) -> [Column<Root>] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Column<Root>]?) -> [Column<Root>] { part ?? [] }
    public static func buildEither(first: [Column<Root>]) -> [Column<Root>] { first }
    public static func buildEither(second: [Column<Root>]) -> [Column<Root>] { second }
}
