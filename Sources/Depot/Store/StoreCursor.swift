/// The rows of a query, one at a time, read by column index: what a store hands to
/// ``StoreReader/scan(_:_:)``.
///
/// Columns are numbered in the query's table column order (0-based). ``value(at:)`` is the
/// complete answer; the typed reads are shortcuts a store may answer straight from its row
/// buffer (SQLite reads a TEXT column into a `String` without building a ``StoredValue``), and
/// answer `nil` whenever the value is not of that kind, NULL included — callers then fall back
/// to ``value(at:)``, which is what decoding errors report.
///
/// ```swift
/// let names = try await store.scan(query) { cursor in
///     var names: [String] = []
///     while try cursor.next() { names.append(cursor.text(at: 1) ?? "") }
///     return names
/// }
/// ```
public protocol StoreCursor {
    /// Moves to the next row: `false` when there is none (the cursor is then finished).
    mutating func next() throws -> Bool
    /// The current row's value of column `column`, as the store keeps it.
    func value(at column: Int) -> StoredValue
    /// Whether column `column` of the current row is NULL.
    func isNull(at column: Int) -> Bool
    /// The text of column `column`, when it holds text.
    func text(at column: Int) -> String?
    /// The floating-point number in column `column`, when it holds one (not an integer).
    func double(at column: Int) -> Double?
    /// The integer in column `column`, when it holds one (not a floating-point number).
    func integer(at column: Int) -> Int64?
}

extension StoreCursor {
    /// Whether ``value(at:)`` is ``StoredValue/null``: a cursor that can tell without building the
    /// value implements it itself.
    public func isNull(at column: Int) -> Bool {
        if case .null = value(at: column) { return true }
        return false
    }

    /// The text ``value(at:)`` holds, or `nil` when it holds anything else.
    public func text(at column: Int) -> String? {
        if case .text(let text) = value(at: column) { return text }
        return nil
    }

    /// The double ``value(at:)`` holds, or `nil` when it holds anything else (an integer included).
    public func double(at column: Int) -> Double? {
        if case .double(let number) = value(at: column) { return number }
        return nil
    }

    /// The integer ``value(at:)`` holds, or `nil` when it holds anything else (a double included).
    public func integer(at column: Int) -> Int64? {
        if case .integer(let number) = value(at: column) { return number }
        return nil
    }
}

/// A cursor over rows already held as stored values: for stores that keep rows in memory.
public struct StoredRowsCursor: StoreCursor {
    let rows: [[StoredValue]]
    var index = -1

    /// A cursor over `rows`, each in the table's column order.
    public init(rows: [[StoredValue]]) {
        self.rows = rows
    }

    /// Moves to the next of the rows; `false` past the last one. Never throws.
    public mutating func next() throws -> Bool {
        guard index + 1 < rows.count else {
            index = rows.count
            return false
        }
        index += 1
        return true
    }

    /// The current row's value of column `column`.
    ///
    /// - Precondition: ``next()`` returned `true` and `column` is within the row.
    public func value(at column: Int) -> StoredValue { rows[index][column] }

    /// Runs `read` over no rows: what a store answers for a query over a table that does not exist.
    public static func empty<Result>(_ read: (inout any StoreCursor) throws -> Result) rethrows -> Result {
        var cursor: any StoreCursor = StoredRowsCursor(rows: [])
        return try read(&cursor)
    }
}

/// Every remaining row of `cursor` as `width` stored values, each turned into a value by `decode`.
package func decodeRows<Value>(
    _ cursor: inout any StoreCursor, width: Int, _ decode: ([StoredValue]) throws -> Value
) throws -> [Value] {
    var results: [Value] = []
    var row = [StoredValue](repeating: .null, count: width)
    while try cursor.next() {
        for column in 0..<width { row[column] = cursor.value(at: column) }
        results.append(try decode(row))
    }
    return results
}

extension StoreReader {
    /// The rows matching `query`, in its order, each turned into a value by `decode`, which
    /// receives the row's values in the table's column order.
    ///
    /// The general form of a read; ``Repository`` decodes entities straight from the cursor of
    /// ``scan(_:_:)`` instead.
    ///
    /// ```swift
    /// let names = try await store.fetch(SelectQuery(table: Airport.schema.table)) { row in row[2] }
    /// ```
    ///
    /// - Throws: What ``scan(_:_:)`` throws, and the first error `decode` throws.
    public func fetch<Value: Sendable>(
        _ query: SelectQuery, decode: @escaping @Sendable ([StoredValue]) throws -> Value
    ) async throws -> [Value] {
        // A projection's rows hold its columns only.
        let width = query.resultTable.columns.count
        return try await scan(query) { cursor in try decodeRows(&cursor, width: width, decode) }
    }
}
