/// A table as stores see it: names and storage types, no Swift types.
///
/// Stores receive descriptions, never closures over rows: this one is derived from an entity's
/// ``Schema`` and is what SQL stores create and check, and what migrations will change.
public struct TableDescription: Sendable, Hashable {
    /// One column of the table.
    public struct ColumnDescription: Sendable, Hashable {
        /// The column's name in the table.
        public var name: String
        /// The storage type.
        public var type: ColumnType
        /// Whether the column accepts NULL (`false`: NOT NULL).
        public var isNullable: Bool

        /// A column named `name`, of storage type `type`.
        public init(name: String, type: ColumnType, isNullable: Bool) {
            self.name = name
            self.type = type
            self.isNullable = isNullable
        }
    }

    /// The table's name.
    public var name: String
    /// The Swift entity it stores, for messages.
    public var entityName: String
    /// The columns, in schema order.
    public var columns: [ColumnDescription]
    /// The primary-key column names, in key order.
    public var primaryKey: [String]
    /// The indexes and unique constraints the schema declares (``Schema/index(_:name:)``,
    /// ``Schema/unique(_:name:)``), created with the table.
    public var indexes: [IndexDescription]

    /// A table description; entities get theirs from their schema (``Schema/table``).
    ///
    /// Nothing is checked here; a ``Schema`` checks the description it makes (names that pass
    /// ``isValidIdentifier(_:)``, a key among the columns) and reports problems in
    /// ``Schema/validationError``.
    ///
    /// - Parameters:
    ///   - name: The table's name.
    ///   - entityName: The Swift type stored in it, for messages.
    ///   - columns: The columns, in order.
    ///   - primaryKey: The primary-key column names, in key order.
    ///   - indexes: The indexes created with the table.
    public init(
        name: String, entityName: String, columns: [ColumnDescription], primaryKey: [String],
        indexes: [IndexDescription] = []
    ) {
        self.name = name
        self.entityName = entityName
        self.columns = columns
        self.primaryKey = primaryKey
        self.indexes = indexes
    }

    /// Positions of the primary-key columns in ``columns``.
    public var primaryKeyIndices: [Int] {
        primaryKey.compactMap { key in columns.firstIndex { $0.name == key } }
    }

    /// The index of the column named `name`.
    public func columnIndex(_ name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }

    /// How a filter or ordering names a key path that is not a column: this prefix, then the
    /// error's message. No column can have this name, so validating the query throws it.
    static let notAColumnMarker = "\u{0}not a column\u{0}"

    /// The index of the column named `name`.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` naming the entity, the table and the column.
    public func requireColumn(_ name: String) throws(DepotError) -> Int {
        guard let index = columnIndex(name) else {
            if name.hasPrefix(Self.notAColumnMarker) {
                throw DepotError(.invalidQuery, String(name.dropFirst(Self.notAColumnMarker.count)), table: self.name)
            }
            throw DepotError(
                .invalidQuery, "\(entityName) (table '\(self.name)') has no column '\(name)'", table: self.name,
                column: name)
        }
        return index
    }

    /// Checks the shape of a write — whole rows, each column known and named once, every
    /// primary-key column present — and returns the positions of the key columns in the batch's
    /// columns, in key order. Every store's writer calls this before writing, so a malformed
    /// batch fails the same way everywhere, before anything is written.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` for values that do not fill whole rows, an
    ///   unknown column or one named twice; `.missingColumns` for a missing key column.
    public func keyPositions(inWrite rows: RowBatch) throws(DepotError) -> [Int] {
        let columns = rows.columns
        guard columns.isEmpty ? rows.values.isEmpty : rows.values.count % columns.count == 0 else {
            throw DepotError(
                .invalidQuery,
                "a write to \(name) has \(rows.values.count) values, which do not fill rows of \(columns.count) "
                    + "columns", table: name)
        }
        var seen: Set<String> = []
        for column in columns {
            _ = try requireColumn(column)
            guard seen.insert(column).inserted else {
                throw DepotError(
                    .invalidQuery, "a write to \(name) names column '\(column)' twice", table: name, column: column)
            }
        }
        let keys = try primaryKey.map { key throws(DepotError) -> Int in
            guard let position = columns.firstIndex(of: key) else {
                throw DepotError(
                    .missingColumns, "a write to \(name) lacks key column '\(key)'", table: name, column: key)
            }
            return position
        }
        if let index = rows.values.firstIndex(where: \.isNotANumber) {
            let column = columns[index % columns.count]
            let row = index / columns.count * columns.count
            let key = Self.describeKey(keys.map { rows.values[row + $0] })
            throw DepotError(
                .encodingFailed,
                "column \(column) of \(name) row \(key) holds NaN, which Depot does not store: the stores "
                    + "would compare and order it differently (store nil for a missing value)",
                table: name, column: column)
        }
        return keys
    }

    /// Whether writing `rows` in `mode` changes nothing: no rows, or an update that assigns only
    /// key columns. Writers skip such a batch entirely (no statement, no table touched).
    public func writeChangesNothing(_ rows: RowBatch, mode: WriteMode) -> Bool {
        rows.count == 0 || (mode == .update && rows.columns.allSatisfy(primaryKey.contains))
    }

    /// A key rendered for messages: `'ENGM'` or `('a', 2)`.
    public static func describeKey(_ key: [StoredValue]) -> String {
        let parts = key.map(describeKeyPart)
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: ", ") + ")"
    }

    private static func describeKeyPart(_ value: StoredValue) -> String {
        switch value {
        case .text(let text): "'\(text)'"
        case .integer(let number): "\(number)"
        case .uuid(let uuid): uuid.uuidString
        case .null: "NULL"
        default: value.excerpt
        }
    }

    /// The identifier rule every table and column name follows: ASCII letters, digits and
    /// underscores, not starting with a digit, at most 63 bytes (PostgreSQL's limit).
    public static func isValidIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63 else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
        }
        return isLetter(first) && name.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}
