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
    ///
    /// A table that does not exist yet reads as empty.
    ///
    /// - Throws: A ``DepotError`` of kind `.invalidQuery` when the query names a column its table
    ///   lacks or has a negative limit or offset (``SelectQuery/validate()``), `.schemaMismatch`
    ///   when the stored table differs from ``SelectQuery/table``, `.storage` or `.connection`
    ///   when the engine fails; and whatever `read` throws.
    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result

    /// How many rows match `query` (its predicate, limit and offset); 0 for a table that does
    /// not exist yet.
    ///
    /// - Throws: A ``DepotError``, as ``scan(_:_:)`` does.
    func count(_ query: SelectQuery) async throws -> Int

    /// The groups and aggregates of `query`, computed inside the store: one row per group, the
    /// grouping columns' values then the aggregates', typed as ``AggregateQuery/resultTable``
    /// says (see ``AggregateQuery`` for empty results). A table that does not exist yet reads as
    /// empty.
    ///
    /// Stores that do not aggregate by themselves get a default that computes it in Swift over
    /// the rows ``scan(_:_:)`` returns; SQL stores run one `GROUP BY` statement.
    ///
    /// - Throws: A ``DepotError`` of kind `.invalidQuery` (``AggregateQuery/validate()``),
    ///   `.overflow` when an integer sum exceeds Int64, and what ``scan(_:_:)`` throws.
    func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]]
}
