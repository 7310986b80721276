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
    /// - Throws: A ``DepotError`` of kind `.invalidQuery` when the batch names a column the table
    ///   lacks, `.missingColumns` when it lacks a key column, `.constraintViolation` when an
    ///   inserted key exists already or a NOT NULL or unique rule rejects a row, `.schemaMismatch`
    ///   when the stored table differs from `table`.
    @discardableResult
    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int

    /// Assigns columns of every row matching the update's predicate, in one step: values, or a
    /// column plus a number. Stores without a statement of their own get a default that reads
    /// the rows and writes them back (``WriteMode/update``).
    ///
    /// - Returns: How many rows matched.
    /// - Throws: What ``UpdateQuery/validate()`` throws, `.overflow` when an addition does not fit,
    ///   `.schemaMismatch` when the stored table differs.
    func update(_ query: UpdateQuery) async throws -> Int

    /// Deletes the rows of `table` matching `predicate` (every row when `nil`); returns how many.
    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int

    /// Runs `body` so that if it throws, everything it wrote is undone and the transaction goes on
    /// (a savepoint).
    ///
    /// - Throws: The error `body` throws, once its writes are undone.
    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T
}

/// How ``StoreWriter/write(_:into:mode:)`` treats keys that already exist.
public enum WriteMode: Sendable, Hashable {
    /// New rows only: an existing key fails the write.
    case insert
    /// Insert new rows, update the batch's columns of existing ones.
    case upsert
    /// Update the batch's columns of existing rows; keys not stored are skipped, and so are rows
    /// that hold the batch's values already (neither is counted). (Engines check NOT NULL on an
    /// upsert's proposed row before its conflict, so partial updates of stored rows use this.)
    case update
}
