import Depot
import Foundation

/// A store that runs hand-written SQL (``SQL``): ``SQLStore`` — `SQLiteStore`, `PostgresStore` —
/// and the transactions they open. Stores that evaluate queries themselves (the in-memory store)
/// and wrappers that must see every write (DepotSync's `SyncedStore`, whose outbox a hand-written
/// `UPDATE` would skip) are not: calling `sql` on them does not compile.
///
/// ```swift
/// let store = try SQLiteStore(path: path)
/// let result = try await store.sql("SELECT count(*) AS n FROM \(table: Airport.self)")
/// result.rows[0][0]  // .integer(28298)
///
/// // Holding `any Store`: ask for the capability.
/// if let sql = store as? any SQLRunning { … }
/// ```
public protocol SQLRunning: StoreReader {
    /// Runs a hand-written statement and returns its column names and rows, values as the
    /// engine gives them.
    ///
    /// - Throws: A `DepotError` of kind `.invalidQuery` when the statement has no text for
    ///   this store's dialect or names an invalid identifier; the engine's error (`.storage`,
    ///   `.connection`) when it refuses the statement.
    func rows(_ statement: SQL) async throws -> SQLRows

    /// Runs a hand-written statement whose result holds `table`'s columns (by name, others
    /// ignored) and hands them to `read` in `table`'s column order, typed as `table` says: how
    /// ``sql(_:as:)`` decodes entities.
    ///
    /// - Throws: What ``rows(_:)`` throws; the engine's error when the result lacks a column.
    func scan<Result: Sendable>(
        _ statement: SQL, shapedAs table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result
}

extension SQLRunning {
    /// Runs a hand-written statement (see ``SQL``) and returns its column names and rows.
    ///
    /// ```swift
    /// let result = try await store.sql("SELECT count(*) AS n FROM \(table: Airport.self)")
    /// result.rows[0][0]  // .integer(28298)
    /// ```
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` for a statement without text for this
    ///   store's dialect or with an invalid identifier; the engine's error (`.storage`,
    ///   `.connection`) when it refuses the statement.
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
    /// Values convert as entity columns do (`StorableValue`): a `Date` from seconds since the
    /// reference date or PostgreSQL's `timestamptz`, a `UUID` from 16 bytes or text, a `Bool`
    /// from 0 and 1, a `Decimal` from exact text.
    ///
    /// - Throws: What ``sql(_:)`` throws; `.decodingFailed` naming the row and column when a
    ///   value does not fit, or a property has no column.
    public func sql<Row: Decodable>(_ statement: SQL, decoding type: Row.Type) async throws -> [Row] {
        try SQLRowDecoder.decode(type, from: try await rows(statement))
    }
}

extension Transaction {
    /// Runs a hand-written statement inside this transaction (it sees the transaction's writes).
    ///
    /// - Throws: What ``SQLRunning/sql(_:)`` throws; `.invalidQuery` when the transaction belongs
    ///   to a store that runs no SQL (a synced store: its outbox would miss the statement's writes).
    public func sql(_ statement: SQL) async throws -> SQLRows {
        try await withWriter { writer in try await Self.running(writer).rows(statement) }
    }

    /// Runs a hand-written statement inside this transaction and decodes entities.
    ///
    /// - Throws: What ``SQLRunning/sql(_:as:)`` throws, and what ``sql(_:)`` throws.
    public func sql<Root: Entity>(_ statement: SQL, as entity: Root.Type) async throws -> [Root] {
        try await withWriter { writer in try await Self.running(writer).sql(statement, as: entity) }
    }

    /// Runs a hand-written statement inside this transaction and decodes rows by column name.
    ///
    /// - Throws: What ``SQLRunning/sql(_:decoding:)`` throws, and what ``sql(_:)`` throws.
    public func sql<Row: Decodable>(_ statement: SQL, decoding type: Row.Type) async throws -> [Row] {
        try SQLRowDecoder.decode(type, from: try await sql(statement))
    }

    private static func running(_ writer: any StoreWriter) throws -> any SQLRunning {
        guard let running = writer as? any SQLRunning else {
            throw DepotError(
                .invalidQuery,
                "a transaction of \(type(of: writer)) runs no hand-written SQL: use repository calls, "
                    + "or a transaction of a SQL store (SQLiteStore, PostgresStore)")
        }
        return running
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

    /// Every row of `result` decoded as `type`.
    static func decode<Row: Decodable>(_ type: Row.Type, from result: SQLRows) throws -> [Row] {
        try result.rows.enumerated().map { index, values in
            try Row(from: SQLRowDecoder(columns: result.columns, values: values, row: index))
        }
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
