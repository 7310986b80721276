/// A query as stores see it: which table, which rows, in which order, how many.
public struct SelectQuery: Sendable, Hashable {
    /// The table read.
    public var table: TableDescription
    /// The condition; `nil` matches every row.
    public var predicate: PredicateNode?
    /// The order, always ending with the primary-key columns (a total, store-independent order).
    public var ordering: [OrderTerm]
    /// The most rows returned.
    public var limit: Int?
    /// Rows skipped before the first returned.
    public var offset: Int?

    /// A query over `table`; the primary key is appended to `ordering` as the final tie-breaker.
    public init(
        table: TableDescription, predicate: PredicateNode? = nil, ordering: [OrderTerm] = [],
        limit: Int? = nil, offset: Int? = nil
    ) {
        self.table = table
        self.predicate = predicate
        var terms = ordering
        for key in table.primaryKey where !terms.contains(where: { $0.columns == [key] }) {
            terms.append(.column(key, descending: false))
        }
        self.ordering = terms
        self.limit = limit
        self.offset = offset
    }

    /// Every column the query reads, checked against the table before it runs.
    public func validate() throws {
        var names = predicate?.columns ?? []
        for term in ordering { names.formUnion(term.columns) }
        for name in names { _ = try table.requireColumn(name) }
        if let limit, limit < 0 {
            throw DepotError(.invalidQuery, "limit must not be negative (got \(limit))", table: table.name)
        }
        if let offset, offset < 0 {
            throw DepotError(.invalidQuery, "offset must not be negative (got \(offset))", table: table.name)
        }
    }
}
