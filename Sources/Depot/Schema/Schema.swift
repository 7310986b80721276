@_spi(Reflection) import Swift

/// The table an ``Entity`` is stored in: its name, columns and primary key.
///
/// ```swift
/// static let schema = Schema<Airport>("airports", primaryKey: \.icao) {
///     Column(\.icao, "icao")
///     Column(\.name, "name")
///     Column(\.latitude, "lat")
/// }
/// ```
/// A composite key lists several key paths: `primaryKey: \.airport, \.runway`.
///
/// Declaration problems (an invalid identifier, a duplicate column, a key that is not a column,
/// a stored property without a column) do not crash: ``validationError`` holds them, and every
/// repository call on the entity throws it, naming the entity and column.
public struct Schema<Root>: Sendable {
    /// Everything the schema holds, behind one reference: generic code reads `Root.schema` on
    /// every call, and a copy then retains one object, not each of its arrays and closures.
    let storage: SchemaStorage<Root>

    /// The table's name.
    public var tableName: String { storage.tableName }
    /// The columns, in declaration order.
    public var columns: [Column<Root>] { storage.columns }
    /// Indices into ``columns`` of the primary-key columns, in key order.
    public var primaryKeyIndices: [Int] { storage.primaryKeyIndices }
    /// The description stores work with (its indexes included).
    public var table: TableDescription { storage.table }
    /// What is wrong with the declaration, if anything.
    public var validationError: DepotError? { storage.validationError }

    /// Indices into ``columns`` of the columns a new row must have a value for: neither optional
    /// nor part of the key.
    var requiredColumnIndices: [Int] { storage.requiredColumnIndices }
    var columnIndexByKeyPath: [KeyPathBox: Int] { storage.columnIndexByKeyPath }
    var offsets: [Int] { storage.offsets }
    var loaders: [@Sendable (UnsafeRawPointer) -> StoredValue] { storage.loaders }
    var getters: [@Sendable (Root) -> StoredValue] { storage.getters }
    var initializers: [@Sendable (UnsafeMutableRawPointer, StoredValue) throws(StoredValueMismatch) -> Void] {
        storage.initializers
    }
    var deinitializers: [@Sendable (UnsafeMutableRawPointer) -> Void] { storage.deinitializers }
    var encodingChecks: [(column: Int, check: @Sendable (Root) throws -> Void)] { storage.encodingChecks }
    var customDecode: (@Sendable (Row<Root>) throws -> Root)? { storage.customDecode }
    var codec: RowCodec<Root>? { storage.codec }
    var loadsInPlace: Bool { storage.loadsInPlace }
    var decodesInPlace: Bool { storage.decodesInPlace }
    var rowDecoder: RowDecoder { storage.rowDecoder }

    /// Declares a table named `tableName` with the given primary key and columns.
    public init(
        _ tableName: String, primaryKey: PartialKeyPath<Root>...,
        @ColumnsBuilder<Root> columns: () -> [Column<Root>]
    ) {
        self.init(tableName, primaryKey: primaryKey, decode: nil, columns: columns())
    }

    /// Declares a table whose rows are rebuilt by `decode`, for types with stored properties
    /// that are not columns (caches, UI state) or with computed columns.
    ///
    /// ```swift
    /// static let schema = Schema<Airport>("airports", primaryKey: \.icao,
    ///     decode: { row in try Airport(icao: row[\.icao], name: row[\.name]) }) {
    ///     Column(\.icao, "icao")
    ///     Column(\.name, "name")
    /// }
    /// ```
    public init(
        _ tableName: String, primaryKey: PartialKeyPath<Root>...,
        decode: @escaping @Sendable (Row<Root>) throws -> Root,
        @ColumnsBuilder<Root> columns: () -> [Column<Root>]
    ) {
        self.init(tableName, primaryKey: primaryKey, decode: decode, columns: columns())
    }

    /// Declares a table whose rows are read and written by `codec`: what `@Entity` generates.
    ///
    /// The columns still name the key paths (for predicates, orderings and assignments); the rows
    /// themselves never go through them. The codec must write and read the columns in the order
    /// they are declared here.
    public init(
        _ tableName: String, primaryKey: PartialKeyPath<Root>..., codec: RowCodec<Root>,
        @ColumnsBuilder<Root> columns: () -> [Column<Root>]
    ) {
        self.init(tableName, primaryKey: primaryKey, decode: nil, codec: codec, columns: columns())
    }

    init(
        _ tableName: String, primaryKey: [PartialKeyPath<Root>],
        decode: (@Sendable (Row<Root>) throws -> Root)?, codec: RowCodec<Root>? = nil, columns: [Column<Root>]
    ) {
        storage = SchemaStorage(tableName, primaryKey: primaryKey, decode: decode, codec: codec, columns: columns)
    }

    init(storage: SchemaStorage<Root>) { self.storage = storage }

    /// The index in ``columns`` of the column for `keyPath`, or `nil` when it is not a column.
    func columnIndex(_ keyPath: AnyKeyPath) -> Int? { columnIndexByKeyPath[KeyPathBox(keyPath)] }

    /// The index in ``columns`` of the column for `keyPath`.
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when `keyPath` is not a column (a computed
    ///   property, a property of a nested value such as `\.coordinate.latitude`).
    func requireColumn(_ keyPath: AnyKeyPath) throws(DepotError) -> Int {
        guard let index = columnIndex(keyPath) else { throw notAColumn(keyPath) }
        return index
    }

    /// The error for a key path that is not a column of this schema.
    func notAColumn(_ keyPath: AnyKeyPath) -> DepotError {
        DepotError(
            .invalidQuery,
            "\(keyPath) is not a column of \(table.entityName) (table '\(tableName)'): only key paths named by "
                + "the schema's Column(…) entries can be filtered, ordered or assigned",
            table: tableName)
    }

    /// The column name for `keyPath`.
    ///
    /// ```swift
    /// try Airport.schema.columnName(\.latitude)  // "lat"
    /// ```
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` when `keyPath` is not a column.
    public func columnName(_ keyPath: AnyKeyPath) throws(DepotError) -> String {
        columns[try requireColumn(keyPath)].name
    }

    /// The name a filter or an ordering refers to `keyPath` by: the column's name, or, for a key
    /// path that is not a column, a name no column can have that makes the query fail with
    /// ``notAColumn(_:)`` when a store validates it (filters are built by operators, which cannot
    /// throw).
    package func referenceName(_ keyPath: AnyKeyPath) -> String {
        guard let index = columnIndex(keyPath) else {
            return TableDescription.notAColumnMarker + notAColumn(keyPath).message
        }
        return columns[index].name
    }

    // MARK: - Layout

    /// Why rows cannot be rebuilt in place: stored properties without a column, or overlaps.
    fileprivate static func layoutProblems(_ columns: [Column<Root>]) -> [String] {
        var byOffset: [Int: [Column<Root>]] = [:]
        for column in columns {
            guard let offset = column.offset else {
                return [
                    "column '\(column.name)' is not a stored property; pass decode: to the schema to build values"
                ]
            }
            byOffset[offset, default: []].append(column)
        }
        var problems: [String] = []
        var used: Set<String> = []
        func size(of type: Any.Type) -> Int {
            func measure<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
            return _openExistential(type, do: measure)
        }
        func cover(_ type: Any.Type, base: Int, path: String) -> Bool {
            var complete = true
            let walked = _forEachField(of: type, options: []) { namePointer, offset, fieldType, kind in
                let name = path + String(cString: namePointer)
                let start = base + offset
                let end = start + size(of: fieldType)
                if let match = byOffset[start]?.first(where: { $0.valueType == ObjectIdentifier(fieldType) }) {
                    if !used.insert(match.name).inserted { problems.append("'\(name)' has two columns") }
                } else if kind == .struct, byOffset.keys.contains(where: { $0 >= start && $0 < end }) {
                    // Columns reach into this nested struct: each of its stored properties needs one.
                    if !cover(fieldType, base: start, path: name + ".") { complete = false }
                } else {
                    complete = false
                    problems.append("stored property '\(name)' has no column; add one, or pass decode: to the schema")
                }
                return true
            }
            return walked && complete
        }
        if !cover(Root.self, base: 0, path: "") && problems.isEmpty {
            problems.append("\(Root.self) is not a struct; pass decode: to the schema to build values")
        }
        let unused = columns.filter { !used.contains($0.name) }
        if problems.isEmpty, let extra = unused.first {
            problems.append("column '\(extra.name)' overlaps another stored property")
        }
        return problems
    }
}

/// The contents of a ``Schema``, shared by its copies (see `Schema.storage`).
final class SchemaStorage<Root>: Sendable {
    /// The table's name.
    let tableName: String
    /// The columns, in declaration order.
    let columns: [Column<Root>]
    /// Indices into ``columns`` of the primary-key columns, in key order.
    let primaryKeyIndices: [Int]
    /// The description stores work with (its indexes included).
    let table: TableDescription
    /// What is wrong with the declaration, if anything.
    let validationError: DepotError?
    let requiredColumnIndices: [Int]

    let columnIndexByKeyPath: [KeyPathBox: Int]
    /// Byte offsets of the columns' attributes, in column order (0 when not stored properties).
    let offsets: [Int]
    // The hot per-cell closures, in their own arrays: reading a field of a `Column<Root>` element
    // in unspecialized code copies the whole struct (every closure retained) per cell.
    let loaders: [@Sendable (UnsafeRawPointer) -> StoredValue]
    let getters: [@Sendable (Root) -> StoredValue]
    let initializers: [@Sendable (UnsafeMutableRawPointer, StoredValue) throws(StoredValueMismatch) -> Void]
    let deinitializers: [@Sendable (UnsafeMutableRawPointer) -> Void]
    /// The JSON columns, with how to encode their attribute again, throwing.
    let encodingChecks: [(column: Int, check: @Sendable (Root) throws -> Void)]
    let customDecode: (@Sendable (Row<Root>) throws -> Root)?
    /// The generated (or hand-written) row codec, when the schema has one: rows are then read
    /// and written through it, never by key path or byte offset.
    let codec: RowCodec<Root>?
    /// Whether every column is a stored property, readable in place by byte offset.
    let loadsInPlace: Bool
    /// Whether rows can be rebuilt by initializing each stored property in place.
    let decodesInPlace: Bool
    /// Rebuilds rows in place from a ``StoreCursor``.
    let rowDecoder: RowDecoder

    init(
        _ tableName: String, primaryKey: [PartialKeyPath<Root>],
        decode: (@Sendable (Row<Root>) throws -> Root)?, codec: RowCodec<Root>? = nil, columns: [Column<Root>]
    ) {
        let entityName = String(describing: Root.self)
        self.tableName = tableName
        self.columns = columns
        self.customDecode = decode
        self.codec = codec
        self.loadsInPlace = columns.allSatisfy { $0.offset != nil }
        var problems: [String] = []
        var byKeyPath: [KeyPathBox: Int] = [:]
        var seenNames: Set<String> = []
        if !TableDescription.isValidIdentifier(tableName) {
            problems.append(
                "table name '\(tableName)' is not a valid identifier (letters, digits, _; at most 63 bytes)")
        }
        if columns.isEmpty { problems.append("it declares no columns") }
        for (index, column) in columns.enumerated() {
            if !TableDescription.isValidIdentifier(column.name) {
                problems.append("column name '\(column.name)' is not a valid identifier")
            }
            if !seenNames.insert(column.name.lowercased()).inserted {
                problems.append("column '\(column.name)' is declared twice")
            }
            if byKeyPath[column.keyPath] != nil {
                problems.append("key path of column '\(column.name)' is already mapped to another column")
            }
            byKeyPath[column.keyPath] = index
        }
        var keyIndices: [Int] = []
        if primaryKey.isEmpty { problems.append("it declares no primary key") }
        for keyPath in primaryKey {
            if let index = byKeyPath[KeyPathBox(keyPath)] {
                keyIndices.append(index)
                if columns[index].isNullable {
                    problems.append("primary-key column '\(columns[index].name)' is optional; keys cannot be NULL")
                }
            } else {
                problems.append("primary key \(keyPath) is not among the columns")
            }
        }
        // A codec builds values itself: no layout to check (and no reflection at run time).
        let layout = decode == nil && codec == nil ? Schema.layoutProblems(columns) : []
        problems += layout
        self.decodesInPlace = decode == nil && codec == nil && layout.isEmpty
        self.offsets = columns.map { $0.offset ?? 0 }
        self.loaders = columns.map(\.load)
        self.getters = columns.map(\.get)
        self.encodingChecks = columns.indices.compactMap { index in
            columns[index].encodingCheck.map { (index, $0) }
        }
        self.initializers = columns.map(\.initialize)
        self.deinitializers = columns.map(\.deinitialize)
        self.rowDecoder = RowDecoder(
            fields: columns.map { FieldPlan(valueType: $0.valueType, offset: $0.offset ?? 0) },
            initializers: initializers, deinitializers: deinitializers, keyIndices: keyIndices)
        self.primaryKeyIndices = keyIndices
        self.columnIndexByKeyPath = byKeyPath
        self.requiredColumnIndices = columns.indices.filter { !columns[$0].isNullable && !keyIndices.contains($0) }
        self.table = TableDescription(
            name: tableName, entityName: entityName,
            columns: columns.map { .init(name: $0.name, type: $0.type, isNullable: $0.isNullable) },
            primaryKey: keyIndices.map { columns[$0].name })
        if problems.isEmpty {
            self.validationError = nil
        } else {
            self.validationError = DepotError(
                .invalidSchema,
                "Schema of \(entityName) (table '\(tableName)'): " + problems.joined(separator: "; "),
                table: tableName)
        }
    }

    /// A copy of `other` with another table description and validation error.
    init(_ other: SchemaStorage, table: TableDescription, validationError: DepotError?) {
        tableName = other.tableName
        columns = other.columns
        primaryKeyIndices = other.primaryKeyIndices
        self.table = table
        self.validationError = validationError
        requiredColumnIndices = other.requiredColumnIndices
        columnIndexByKeyPath = other.columnIndexByKeyPath
        offsets = other.offsets
        loaders = other.loaders
        getters = other.getters
        initializers = other.initializers
        deinitializers = other.deinitializers
        encodingChecks = other.encodingChecks
        customDecode = other.customDecode
        codec = other.codec
        loadsInPlace = other.loadsInPlace
        decodesInPlace = other.decodesInPlace
        rowDecoder = other.rowDecoder
    }
}

/// The values of one row, read by key path in a schema's custom `decode:` closure.
public struct Row<Root> {
    let schema: Schema<Root>
    let values: [StoredValue]

    /// The value of the column for `keyPath`, converted to its Swift type.
    public subscript<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>) -> Value {
        get throws {
            let index = try schema.requireColumn(keyPath)
            do {
                return try Value(storedValue: values[index])
            } catch {
                throw schema.decodingError(column: index, values: values, error)
            }
        }
    }
}

extension Schema {
    /// The error for a value of column `column` that does not decode.
    func decodingError(column: Int, values: [StoredValue], _ mismatch: StoredValueMismatch) -> DepotError {
        decodingError(column: column, key: primaryKeyIndices.map { values[$0] }, mismatch)
    }

    /// The error for a value of column `column`, in the row with primary key `key`, that does not decode.
    func decodingError(column: Int, key: [StoredValue], _ mismatch: StoredValueMismatch) -> DepotError {
        let name = columns[column].name
        let key = TableDescription.describeKey(key)
        return DepotError(
            .decodingFailed,
            "column \(name) of \(tableName) row \(key) \(mismatch.description)",
            table: tableName, column: name, underlying: mismatch)
    }

    /// The stored values of `entity`, in column order, appended to `values`.
    func appendValues(of entity: Root, to values: inout [StoredValue]) {
        if let codec {
            codec.encode(entity, &values)
            return
        }
        // Index access: iterating the columns would copy each Column (and retain its closures) per row.
        if decodesInPlace {
            withUnsafePointer(to: entity) { pointer in
                let base = UnsafeRawPointer(pointer)
                for load in loaders { values.append(load(base)) }
            }
        } else {
            for get in getters { values.append(get(entity)) }
        }
    }

    /// Throws when a JSON attribute of `entity` could not be encoded (its cell in `values`, the
    /// entity's row in column order, holds the text `null` then): the error names the entity,
    /// the column and the row's key.
    func checkEncoded(_ entity: Root, values: ArraySlice<StoredValue>) throws(DepotError) {
        for (column, check) in encodingChecks where values[values.startIndex + column] == .text("null") {
            do {
                try check(entity)
            } catch {
                let name = columns[column].name
                let key = TableDescription.describeKey(primaryKeyIndices.map { values[values.startIndex + $0] })
                throw DepotError(
                    .encodingFailed, "column \(name) of \(tableName) row \(key) cannot be stored as JSON: \(error)",
                    table: tableName, column: name, underlying: error)
            }
        }
    }

    /// The stored values of `entity`, in column order.
    public func values(of entity: Root) -> [StoredValue] {
        var values: [StoredValue] = []
        values.reserveCapacity(columns.count)
        appendValues(of: entity, to: &values)
        return values
    }

    /// The stored values of column `column` of each of `entities`, in order: read in place by
    /// byte offset when the schema allows (no key path or generic call per entity).
    func values(of entities: [Root], column: Int) -> [StoredValue] {
        guard decodesInPlace || loadsInPlace else { return entities.map(getters[column]) }
        let load = loaders[column]
        let stride = MemoryLayout<Root>.stride
        return entities.withUnsafeBufferPointer { buffer in
            var values: [StoredValue] = []
            values.reserveCapacity(buffer.count)
            guard let base = buffer.baseAddress.map(UnsafeRawPointer.init) else { return values }
            for index in 0..<buffer.count { values.append(load(base.advanced(by: index * stride))) }
            return values
        }
    }

    /// The primary key of `entity`.
    public func key(of entity: Root) -> [StoredValue] {
        guard loadsInPlace else { return primaryKeyIndices.map { getters[$0](entity) } }
        return withUnsafePointer(to: entity) { pointer in
            primaryKeyIndices.map { loaders[$0](UnsafeRawPointer(pointer)) }
        }
    }

    /// Rebuilds an entity from stored values in column order.
    ///
    /// ```swift
    /// let oslo = try Airport.schema.decode([.text("ENGM"), .text("OSL"), .text("Oslo Gardermoen"), .double(208)])
    /// ```
    ///
    /// - Precondition: ``validationError`` is `nil` and `values` holds one value per column.
    ///   Repositories check the first before decoding; call this only on a schema that passed it.
    /// - Throws: ``DepotError`` of kind `.decodingFailed` naming the column and the row's key when
    ///   a value does not fit its attribute; or what a custom `decode:` closure throws.
    public func decode(_ values: [StoredValue]) throws -> Root {
        if let customDecode {
            return try customDecode(Row(schema: self, values: values))
        }
        if let codec {
            var reader = EntityRowReader(cursor: StoredRowsCursor(rows: [values]), keyIndices: primaryKeyIndices)
            _ = try reader.cursor.next()
            do {
                return try codec.decode(&reader)
            } catch let failure as RowDecodingFailure {
                throw decodingError(column: failure.column, key: failure.key, failure.mismatch)
            }
        }
        return try withUnsafeTemporaryAllocation(of: Root.self, capacity: 1) { buffer in
            guard let typed = buffer.baseAddress else {
                throw DepotError(.decodingFailed, "no memory to decode \(Root.self)", table: tableName)
            }
            let base = UnsafeMutableRawPointer(typed)
            var initialized = 0
            do throws(StoredValueMismatch) {
                while initialized < initializers.count {
                    try initializers[initialized](base.advanced(by: offsets[initialized]), values[initialized])
                    initialized += 1
                }
            } catch {
                for index in 0..<initialized {
                    deinitializers[index](base.advanced(by: offsets[index]))
                }
                throw decodingError(column: initialized, values: values, error)
            }
            return typed.move()
        }
    }
}

// MARK: - Indexes

extension Schema {
    /// This schema with an index on `columns` (in that order), which stores create with the table.
    ///
    /// ```swift
    /// static let schema = Schema<Airport>("airports", primaryKey: \.icao) {
    ///     Column(\.icao, "icao")
    ///     Column(\.country, "country")
    ///     Column(\.city, "city")
    /// }
    /// .index(\.country, \.city)
    /// ```
    /// Named `<table>_<column>…_idx` unless `name` says otherwise. A key path that is not a column,
    /// or a name that is not a valid identifier or is taken, makes the schema invalid
    /// (``validationError``), as any declaration problem does.
    public func index(_ columns: PartialKeyPath<Root>..., name: String? = nil) -> Schema {
        adding(columns, unique: false, name: name)
    }

    /// This schema with a unique constraint on `columns` together: writing a second row with the
    /// same values fails with `.constraintViolation` on every store (rows with NULL in any of
    /// them do not collide).
    ///
    /// ```swift
    /// Schema<User>("users", primaryKey: \.id) { … }.unique(\.email)
    /// ```
    /// Named `<table>_<column>…_key` unless `name` says otherwise.
    public func unique(_ columns: PartialKeyPath<Root>..., name: String? = nil) -> Schema {
        adding(columns, unique: true, name: name)
    }

    private func adding(_ keyPaths: [PartialKeyPath<Root>], unique: Bool, name: String?) -> Schema {
        var table = table
        var validationError = validationError
        var problems: [String] = []
        let names = keyPaths.compactMap { keyPath -> String? in
            guard let index = columnIndex(keyPath) else {
                problems.append("index key path \(keyPath) is not among the columns")
                return nil
            }
            return columns[index].name
        }
        if keyPaths.isEmpty { problems.append("an index names no columns") }
        let indexName = name ?? ([tableName] + names + [unique ? "key" : "idx"]).joined(separator: "_")
        if !TableDescription.isValidIdentifier(indexName) {
            problems.append(
                "index name '\(indexName)' is not a valid identifier (letters, digits, _; at most 63 bytes)"
                    + (name == nil ? "; pass name:" : ""))
        }
        if table.indexes.contains(where: { $0.name.lowercased() == indexName.lowercased() }) {
            problems.append("index '\(indexName)' is declared twice")
        }
        if Set(names).count != names.count { problems.append("index '\(indexName)' names a column twice") }
        if problems.isEmpty {
            table.indexes.append(
                IndexDescription(name: indexName, table: tableName, columns: names, isUnique: unique))
        } else {
            let message = "Schema of \(table.entityName) (table '\(tableName)'): " + problems.joined(separator: "; ")
            validationError = DepotError(
                .invalidSchema, validationError.map { $0.message + "; " + problems.joined(separator: "; ") } ?? message,
                table: tableName)
        }
        return Schema(storage: SchemaStorage(storage, table: table, validationError: validationError))
    }
}
