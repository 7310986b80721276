/// Decoding entities straight from a ``StoreCursor``: each stored property is initialized in place
/// from the column, without a ``StoredValue`` or a closure call for the common types.
extension Schema {
    /// Every remaining row of `cursor`, decoded.
    ///
    /// Rows are built in place in chunks of raw memory and moved into the array once at the end:
    /// the per-row work calls no generic code (each generic call there costs runtime metadata
    /// lookups), and the peak memory matches an array's own growth.
    package func decodeAll(_ cursor: inout any StoreCursor) throws -> [Root] {
        guard codec != nil || (customDecode == nil && decodesInPlace) else {
            return try decodeRows(&cursor, width: columns.count) { try decode($0) }
        }
        let stride = MemoryLayout<Root>.stride
        var chunks = RowChunks(stride: stride, alignment: MemoryLayout<Root>.alignment)
        do {
            if let codec {
                // The generated initializer builds each row; it is moved into the chunk, not copied.
                var reader = EntityRowReader(cursor: cursor, keyIndices: primaryKeyIndices)
                defer { cursor = reader.cursor }
                while try reader.cursor.next() {
                    chunks.nextRow().assumingMemoryBound(to: Root.self).initialize(to: try codec.decode(&reader))
                    chunks.count += 1
                }
            } else {
                while try cursor.next() {
                    try rowDecoder.initialize(at: chunks.nextRow(), from: &cursor)
                    chunks.count += 1
                }
            }
        } catch let failure as RowDecodingFailure {
            chunks.release { chunk, count in chunk.assumingMemoryBound(to: Root.self).deinitialize(count: count) }
            throw decodingError(column: failure.column, key: failure.key, failure.mismatch)
        } catch {
            chunks.release { chunk, count in chunk.assumingMemoryBound(to: Root.self).deinitialize(count: count) }
            throw error
        }
        let total = chunks.total
        return Array(unsafeUninitializedCapacity: total) { buffer, initialized in
            var target = buffer.baseAddress
            chunks.release { chunk, count in
                target?.moveInitialize(from: chunk.assumingMemoryBound(to: Root.self), count: count)
                target = target.map { $0 + count }
            }
            initialized = total
        }
    }
}

/// Raw memory for decoded rows: chunks that grow geometrically (small results stay small).
private struct RowChunks {
    let stride: Int
    let alignment: Int
    var chunks: [(start: UnsafeMutableRawPointer, capacity: Int)] = []
    /// Rows initialized in the last chunk.
    var count = 0
    /// Rows in the chunks before the last.
    var previous = 0

    init(stride: Int, alignment: Int) {
        self.stride = stride
        self.alignment = alignment
    }

    var total: Int { previous + count }

    /// Where the next row goes (call, initialize, then increment ``count``).
    mutating func nextRow() -> UnsafeMutableRawPointer {
        if let last = chunks.last, count < last.capacity {
            return last.start.advanced(by: count * stride)
        }
        let capacity = min(max(16, (chunks.last?.capacity ?? 8) * 2), max(16, (1 << 20) / stride))
        let start = UnsafeMutableRawPointer.allocate(byteCount: capacity * stride, alignment: alignment)
        if !chunks.isEmpty { previous += count }
        chunks.append((start, capacity))
        count = 0
        return start
    }

    /// Hands each chunk's initialized rows to `body` (which must move or deinitialize them),
    /// in order, and frees the chunk.
    mutating func release(_ body: (UnsafeMutableRawPointer, Int) -> Void) {
        for (index, chunk) in chunks.enumerated() {
            body(chunk.start, index == chunks.count - 1 ? count : chunk.capacity)
            chunk.start.deallocate()
        }
        chunks = []
        count = 0
        previous = 0
    }
}

/// The part of a schema that rebuilds a row in place from a cursor; not generic, so the per-row
/// loop runs without runtime generic lookups.
struct RowDecoder: Sendable {
    let fields: [FieldPlan]
    let initializers: [@Sendable (UnsafeMutableRawPointer, StoredValue) throws(StoredValueMismatch) -> Void]
    let deinitializers: [@Sendable (UnsafeMutableRawPointer) -> Void]
    let keyIndices: [Int]

    /// Initializes every attribute of the value at `base` from the cursor's current row; on a
    /// value that does not fit, deinitializes what it did and throws which column failed.
    func initialize(at base: UnsafeMutableRawPointer, from cursor: inout any StoreCursor) throws(RowDecodingFailure) {
        var column = 0
        do throws(StoredValueMismatch) {
            while column < fields.count {
                let field = fields[column]
                let address = base.advanced(by: field.offset)
                if !initializeField(field, at: address, column: column, from: &cursor) {
                    try initializers[column](address, cursor.value(at: column))
                }
                column += 1
            }
        } catch {
            for index in 0..<column { deinitializers[index](base.advanced(by: fields[index].offset)) }
            throw RowDecodingFailure(column: column, key: keyIndices.map { cursor.value(at: $0) }, mismatch: error)
        }
    }
}

/// A column whose value does not decode, in the row with primary key `key`.
@usableFromInline
struct RowDecodingFailure: Error {
    var column: Int
    var key: [StoredValue]
    var mismatch: StoredValueMismatch

    @usableFromInline
    init(column: Int, key: [StoredValue], mismatch: StoredValueMismatch) {
        self.column = column
        self.key = key
        self.mismatch = mismatch
    }
}

/// How a column's attribute is read: the common Swift types directly, others through the
/// column's `StorableValue` conversion.
struct FieldPlan: Sendable {
    var kind: FieldKind
    /// Whether the attribute is the optional form of `kind`'s type.
    var isOptional: Bool
    /// The attribute's byte offset in the entity.
    var offset: Int

    init(valueType type: ObjectIdentifier, offset: Int) {
        self.offset = offset
        switch type {
        case ObjectIdentifier(String.self): (kind, isOptional) = (.text, false)
        case ObjectIdentifier(String?.self): (kind, isOptional) = (.text, true)
        case ObjectIdentifier(Double.self): (kind, isOptional) = (.double, false)
        case ObjectIdentifier(Double?.self): (kind, isOptional) = (.double, true)
        case ObjectIdentifier(Int.self): (kind, isOptional) = (.integer, false)
        case ObjectIdentifier(Int?.self): (kind, isOptional) = (.integer, true)
        case ObjectIdentifier(Bool.self): (kind, isOptional) = (.bool, false)
        case ObjectIdentifier(Bool?.self): (kind, isOptional) = (.bool, true)
        default: (kind, isOptional) = (.other, false)
        }
    }
}

enum FieldKind: Sendable {
    case text, double, integer, bool, other
}

/// Initializes the attribute at `address` from column `column` when the cursor holds a value of
/// the attribute's own kind (or NULL for an optional); `false` leaves it to the general path,
/// which converts or reports the value.
private func initializeField(
    _ field: FieldPlan, at address: UnsafeMutableRawPointer, column: Int, from cursor: inout any StoreCursor
) -> Bool {
    switch field.kind {
    case .text:
        initialize(address, field.isOptional, column, &cursor) { $0.text(at: $1) }
    case .double:
        initialize(address, field.isOptional, column, &cursor) { $0.double(at: $1) }
    case .integer:
        initialize(address, field.isOptional, column, &cursor) { cursor, column in
            cursor.integer(at: column).flatMap { Int(exactly: $0) }
        }
    case .bool:
        initialize(address, field.isOptional, column, &cursor) { cursor, column in
            switch cursor.integer(at: column) {
            case 0: false
            case 1: true
            default: nil
            }
        }
    case .other:
        false
    }
}

/// Initializes a `Value` (or, when `isOptional`, a `Value?`) at `address` with what `read` finds
/// in the column; `false` when it finds nothing of that kind. (Specialized for each caller.)
private func initialize<Value>(
    _ address: UnsafeMutableRawPointer, _ isOptional: Bool, _ column: Int, _ cursor: inout any StoreCursor,
    read: (inout any StoreCursor, Int) -> Value?
) -> Bool {
    if isOptional, cursor.isNull(at: column) {
        address.initializeMemory(as: Value?.self, to: nil)
        return true
    }
    guard let value = read(&cursor, column) else { return false }
    if isOptional {
        address.initializeMemory(as: Value?.self, to: value)
    } else {
        address.initializeMemory(as: Value.self, to: value)
    }
    return true
}
