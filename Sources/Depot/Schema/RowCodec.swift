/// How rows become values of `Root` and back without key paths or reflection: what `@Entity`
/// generates, and what a hand-written ``Schema`` may pass too.
///
/// `encode` appends the entity's stored values in column order; `decode` builds the entity from
/// the reader's current row, reading column *i* with `row.read(i)`.
///
/// ```swift
/// static let schema = Schema<Airport>(
///     "airports", primaryKey: \.icao,
///     codec: RowCodec(
///         encode: { airport, values in
///             values.append(airport.icao.storedValue)
///             values.append(airport.name.storedValue)
///         },
///         decode: { row in try Airport(icao: row.read(0), name: row.read(1)) })
/// ) {
///     Column(\.icao, "icao")
///     Column(\.name, "name")
/// }
/// ```
/// The codec must agree with the columns: one value per column, in their order. A schema whose
/// codec writes another number of values fails its first write with `.invalidSchema`.
public struct RowCodec<Root>: Sendable {
    /// Appends the stored values of an entity, one per column, in column order.
    public let encode: @Sendable (Root, inout [StoredValue]) -> Void
    /// Builds an entity from the reader's current row.
    public let decode: @Sendable (inout EntityRowReader) throws -> Root

    /// A codec from its two directions.
    public init(
        encode: @escaping @Sendable (Root, inout [StoredValue]) -> Void,
        decode: @escaping @Sendable (inout EntityRowReader) throws -> Root
    ) {
        self.encode = encode
        self.decode = decode
    }
}

/// The current row of a store's cursor, read by column position: what a ``RowCodec``'s `decode`
/// (and `@Entity`'s generated `init(depotRow:)`) reads.
///
/// ```swift
/// init(depotRow row: inout EntityRowReader) throws {
///     self.icao = try row.read(0)
///     self.name = try row.read(1)
/// }
/// ```
/// `String`, `Int`, `Double`, `Bool` and their optionals are read straight from the store's row
/// buffer; other types through ``StorableValue/init(storedValue:)``. A value that does not fit
/// throws an error that the repository reports as `.decodingFailed`, naming the column and the
/// row's key.
public struct EntityRowReader {
    @usableFromInline var cursor: any StoreCursor
    @usableFromInline let keyIndices: [Int]

    init(cursor: any StoreCursor, keyIndices: [Int]) {
        self.cursor = cursor
        self.keyIndices = keyIndices
    }

    /// The value of column `column` (0-based, in the schema's column order) of the current row.
    @inlinable
    public func read<Value: StorableValue>(_ column: Int) throws -> Value {
        // Each branch folds away where `Value` is known (the entity's own module).
        if Value.self == String.self {
            if let text = cursor.text(at: column) { return unsafeBitCast(text, to: Value.self) }
        } else if Value.self == Int.self {
            if let number = cursor.integer(at: column), let value = Int(exactly: number) {
                return unsafeBitCast(value, to: Value.self)
            }
        } else if Value.self == Double.self {
            if let number = cursor.double(at: column) { return unsafeBitCast(number, to: Value.self) }
        } else if Value.self == String?.self {
            if cursor.isNull(at: column) { return unsafeBitCast(String?.none, to: Value.self) }
            if let text = cursor.text(at: column) { return unsafeBitCast(String?.some(text), to: Value.self) }
        } else if Value.self == Int?.self {
            if cursor.isNull(at: column) { return unsafeBitCast(Int?.none, to: Value.self) }
            if let number = cursor.integer(at: column), let value = Int(exactly: number) {
                return unsafeBitCast(Int?.some(value), to: Value.self)
            }
        } else if Value.self == Double?.self {
            if cursor.isNull(at: column) { return unsafeBitCast(Double?.none, to: Value.self) }
            if let number = cursor.double(at: column) { return unsafeBitCast(Double?.some(number), to: Value.self) }
        }
        return try readStored(column)
    }

    /// The general path: the column's stored value converted by the type's own initializer.
    @inlinable
    func readStored<Value: StorableValue>(_ column: Int) throws -> Value {
        do throws(StoredValueMismatch) {
            return try Value(storedValue: cursor.value(at: column))
        } catch {
            throw failure(column: column, error)
        }
    }

    @usableFromInline
    func failure(column: Int, _ mismatch: StoredValueMismatch) -> RowDecodingFailure {
        RowDecodingFailure(column: column, key: keyIndices.map { cursor.value(at: $0) }, mismatch: mismatch)
    }
}
