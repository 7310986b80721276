/// A place entities are kept: in memory, in SQLite, in PostgreSQL.
///
/// A store receives descriptions, never closures over rows: queries, batches of rows, and (later)
/// migration steps. Every committed transaction is announced through ``commits()`` with the
/// tables it touched, so observers re-query only what could have changed.
public protocol Store: AnyObject, StoreReader {
    /// Runs `body` in one transaction: all its writes commit together, or none if it throws.
    /// Transactions are serialized; reads outside them see only committed data.
    ///
    /// Applications call ``write(_:)``, which hands a ``Transaction`` instead of the raw writer.
    ///
    /// - Throws: The error `body` throws, after rolling back; a ``DepotError`` of kind
    ///   `.transaction` when the writer is used after `body` returned, or when the engine cannot
    ///   commit; `.storage` or `.connection` when the engine fails.
    func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T

    /// An announcement of each committed transaction from now on, with the tables it touched.
    func commits() -> AsyncStream<StoreCommit>
}
