import Foundation

extension StoreReader {
    /// Runs a hand-written statement (see ``SQL``) and returns its column names and rows.
    ///
    /// ```swift
    /// let result = try await store.sql("SELECT count(*) AS n FROM \(table: Airport.self)")
    /// result.rows[0][0]  // .integer(28298)
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` on the in-memory store (it runs no SQL),
    ///   for a statement without text for this store's dialect or with an invalid identifier;
    ///   the engine's error (`.storage`, `.connection`) when it refuses the statement.
    public func sql(_ statement: SQL) async throws -> SQLRows {
        try await rows(statement)
    }

    /// Runs a hand-written statement that returns an entity's columns (by name; others ignored)
    /// and decodes each row into the entity, as a fetch does.
    ///
    /// ```swift
    /// let high = try await store.sql(
    ///     "SELECT * FROM \(table: Airport.self) WHERE \(column: \Airport.elevation) > \(1_000)", as: Airport.self)
    /// // SQLite: SELECT "icao", … FROM (SELECT * FROM "airports" WHERE "elevation" > ?) AS depot_sql
    /// ```
    ///
    /// - Throws: What ``sql(_:)`` throws; `.decodingFailed` naming the column when a value does
    ///   not fit the entity; the engine's error when the result lacks a column of the entity.
    public func sql<Root: Entity>(_ statement: SQL, as entity: Root.Type) async throws -> [Root] {
        let schema = Root.schema
        if let error = schema.validationError { throw error }
        return try await scan(statement, shapedAs: schema.table) { cursor in try schema.decodeAll(&cursor) }
    }

    /// Runs a hand-written statement and decodes each row into `type` by column name: a
    /// `Decodable` struct whose properties are named as the result's columns, or, for a
    /// one-column result, a single value such as `Int` or `String`.
    ///
    /// ```swift
    /// struct CountryCount: Decodable { var country: String; var n: Int }
    /// let counts = try await store.sql(
    ///     "SELECT country, count(*) AS n FROM \(table: Airport.self) GROUP BY country", decoding: CountryCount.self)
    /// ```
    ///
    /// Values convert as entity columns do (``StorableValue``): a `Date` from seconds since the
    /// reference date or PostgreSQL's `timestamptz`, a `UUID` from 16 bytes or text, a `Bool`
    /// from 0 and 1, a `Decimal` from exact text.
    ///
    /// - Throws: What ``sql(_:)`` throws; `.decodingFailed` naming the row and column when a
    ///   value does not fit, or a property has no column.
    public func sql<Row: Decodable>(_ statement: SQL, decoding type: Row.Type) async throws -> [Row] {
        let result = try await rows(statement)
        return try result.rows.enumerated().map { index, values in
            try Row(from: SQLRowDecoder(columns: result.columns, values: values, row: index))
        }
    }
}

extension Transaction {
    /// Runs a hand-written statement inside this transaction (it sees the transaction's writes).
    ///
    /// - Throws: What ``StoreReader/sql(_:)`` throws.
    public func sql(_ statement: SQL) async throws -> SQLRows { try await writer.sql(statement) }

    /// Runs a hand-written statement inside this transaction and decodes entities.
    ///
    /// - Throws: What ``StoreReader/sql(_:as:)`` throws.
    public func sql<Root: Entity>(_ statement: SQL, as entity: Root.Type) async throws -> [Root] {
        try await writer.sql(statement, as: entity)
    }

    /// Runs a hand-written statement inside this transaction and decodes rows by column name.
    ///
    /// - Throws: What ``StoreReader/sql(_:decoding:)`` throws.
    public func sql<Row: Decodable>(_ statement: SQL, decoding type: Row.Type) async throws -> [Row] {
        try await writer.sql(statement, decoding: type)
    }
}

/// Decodes one row of a hand-written statement by column name.
struct SQLRowDecoder: Decoder {
    let columns: [String]
    let values: [StoredValue]
    let row: Int
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(columns: [String], values: [StoredValue], row: Int) {
        self.columns = columns
        self.values = values
        self.row = row
    }

    func value(_ column: String) throws -> StoredValue {
        guard let index = columns.firstIndex(of: column) else {
            throw DepotError(
                .decodingFailed,
                "SQL row \(row): no column '\(column)' (the result has \(columns.joined(separator: ", ")))",
                column: column)
        }
        return values[index]
    }

    func decode<T: Decodable>(_ type: T.Type, from stored: StoredValue, column: String) throws -> T {
        if let storable = type as? any StorableValue.Type {
            var value = stored
            // SQLite returns a UUID column's 16 bytes as bytes.
            if storable == UUID.self || storable == UUID?.self, case .blob(let data) = stored, data.count == 16 {
                value = .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            }
            let decoded: any StorableValue
            do {
                decoded = try storable.init(storedValue: value)
            } catch {
                throw DepotError(.decodingFailed, "SQL row \(row): column \(column) \(error)", column: column)
            }
            guard let result = decoded as? T else {
                throw DepotError(.decodingFailed, "SQL row \(row): column \(column) is not a \(T.self)", column: column)
            }
            return result
        }
        var nested = self
        nested.codingPath.append(SQLColumnKey(column))
        return try T(from: nested)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DepotError(.decodingFailed, "SQL row \(row): a row decodes as a struct or a single value, not a list")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard values.count == 1 else {
            throw DepotError(
                .decodingFailed,
                "SQL row \(row): a single value needs a result of one column (it has \(columns.count))")
        }
        return Single(decoder: self)
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: SQLRowDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        var allKeys: [Key] { decoder.columns.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { decoder.columns.contains(key.stringValue) }

        func decodeNil(forKey key: Key) throws -> Bool { try decoder.value(key.stringValue).isNull }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decoder.decode(type, from: decoder.value(key.stringValue), column: key.stringValue)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw DepotError(.decodingFailed, "SQL row \(decoder.row): column \(key.stringValue) is not a struct")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DepotError(.decodingFailed, "SQL row \(decoder.row): column \(key.stringValue) is not a list")
        }

        func superDecoder() throws -> any Decoder { decoder }

        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }

    struct Single: SingleValueDecodingContainer {
        let decoder: SQLRowDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool { decoder.values[0].isNull }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try decoder.decode(type, from: decoder.values[0], column: decoder.columns[0])
        }
    }
}

/// A column name as a coding key.
struct SQLColumnKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
