/// Reads a store answers: queries described as ``SelectQuery`` trees, evaluated inside the store.
///
/// Backends implement these protocols; applications use ``Repository`` on top of them.
public protocol StoreReader: Sendable {
    /// Runs `query` and hands the matching rows, in its order, to `read` through a cursor
    /// (columns in the table's column order). `read` advances it with ``StoreCursor/next()``; the
    /// cursor is valid only inside `read`.
    ///
    /// ``fetch(_:decode:)`` is built on this; ``Repository`` decodes entities straight from the
    /// cursor, without a ``StoredValue`` per column where the store can avoid one.
    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result

    /// How many rows match `query` (its predicate, limit and offset).
    func count(_ query: SelectQuery) async throws -> Int
}

/// Writes inside a transaction. Every method applies to the transaction's working state, and
/// reads through it see those writes.
public protocol StoreWriter: StoreReader {
    /// Writes a batch of rows into `table`.
    ///
    /// The batch holds the key columns and any subset of the others. In ``WriteMode/insert``
    /// mode an existing key is a constraint violation; in ``WriteMode/upsert`` mode an existing
    /// row gets the batch's columns and keeps the rest, and a new row gets NULL in columns the
    /// batch lacks (a NOT NULL column lacking is an error naming it). Keys in one batch are
    /// distinct. In ``WriteMode/update`` mode only stored rows change.
    ///
    /// - Returns: how many rows of the batch were written: in ``WriteMode/update`` mode, the ones
    ///   whose key is stored (so a caller can tell that some were not without reading them). A
    ///   batch of key columns only writes nothing and returns 0.
    @discardableResult
    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int

    /// Deletes the rows of `table` matching `predicate` (every row when `nil`); returns how many.
    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int

    /// Runs `body` so that if it throws, everything it wrote is undone and the transaction goes on
    /// (a savepoint).
    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T
}

/// A place entities are kept: in memory, in SQLite, in PostgreSQL.
///
/// A store receives descriptions, never closures over rows: queries, batches of rows, and (later)
/// migration steps. Every committed transaction is announced through ``commits()`` with the
/// tables it touched, so observers re-query only what could have changed.
public protocol Store: AnyObject, StoreReader {
    /// Runs `body` in one transaction: all its writes commit together, or none if it throws.
    /// Transactions are serialized; reads outside them see only committed data.
    func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T

    /// An announcement of each committed transaction from now on, with the tables it touched.
    func commits() -> AsyncStream<StoreCommit>
}

/// How ``StoreWriter/write(_:into:mode:)`` treats keys that already exist.
public enum WriteMode: Sendable, Hashable {
    /// New rows only: an existing key fails the write.
    case insert
    /// Insert new rows, update the batch's columns of existing ones.
    case upsert
    /// Update the batch's columns of existing rows; keys not stored are skipped. (Engines check
    /// NOT NULL on an upsert's proposed row before its conflict, so partial updates of stored
    /// rows use this.)
    case update
}

/// A committed transaction, as announced to observers.
public struct StoreCommit: Sendable, Hashable {
    /// The tables the transaction wrote to.
    public var tables: Set<String>

    public init(tables: Set<String>) { self.tables = tables }
}

/// Rows to write, as column names and a flat array of values (row after row).
public struct RowBatch: Sendable {
    /// The columns each row carries, in order.
    public var columns: [String]
    /// The values, `columns.count` per row.
    public var values: [StoredValue]

    public init(columns: [String], values: [StoredValue]) {
        precondition(
            columns.isEmpty ? values.isEmpty : values.count % columns.count == 0,
            "RowBatch: \(values.count) values do not fill rows of \(columns.count) columns")
        self.columns = columns
        self.values = values
    }

    /// How many rows the batch holds.
    public var count: Int { columns.isEmpty ? 0 : values.count / columns.count }

    /// The values of row `index`.
    public func row(_ index: Int) -> ArraySlice<StoredValue> {
        values[(index * columns.count)..<((index + 1) * columns.count)]
    }
}
