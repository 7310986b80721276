/// What the rows a ``SelectQuery`` reads inside a transaction are protected for, until the
/// transaction ends, on a store whose transactions run side by side. A store that runs one
/// writer at a time has nothing to lock and ignores it.
public enum RowLock: Sendable, Hashable {
    /// The rows a write refers to: their keys stay as they are until the transaction ends (no
    /// other transaction may remove them or change their key meanwhile), though other columns may
    /// change.
    case referenced
    /// The rows a removal takes: no other transaction may lock, change or remove them until the
    /// transaction ends.
    case removed
    /// The rows a read-modify-write (an ``UpdateMapper``) writes back: no other transaction may
    /// change or remove them until the transaction ends, so no update is lost; transactions that
    /// only refer to them (``referenced``) are not held up.
    case updated
}

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
    /// At most this many rows per value of a column, the first in ``ordering`` (what a
    /// per-parent limit on included rows compiles to); applied before ``offset`` and ``limit``.
    public var limitPerGroup: GroupLimit?
    /// Rows the query locks until its transaction ends, on a store whose transactions run side
    /// by side; stores that run one writer at a time ignore it. Referential checks
    /// use it so that a concurrent transaction cannot remove a row between the check and the
    /// commit.
    public var lock: RowLock?
    /// The columns returned, in this order (a projection); `nil` returns every column of the
    /// table, in its order. Filters and orders may read columns not returned.
    public var columns: [String]?

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

    /// The shape of the rows the query returns: ``table`` itself, or its ``columns`` in their
    /// order (the key as declared, so a projection's rows are never mistaken for whole rows).
    public var resultTable: TableDescription {
        guard let columns else { return table }
        var result = table
        result.columns = columns.map { name in
            table.columns.first { $0.name == name } ?? .init(name: name, type: .text, isNullable: true)
        }
        return result
    }

    /// Every table the query reads: its own, then those of its subqueries.
    public var tables: [TableDescription] {
        var seen: Set<String> = [table.name]
        var result = [table]
        for table in predicate?.subqueryTables ?? [] where seen.insert(table.name).inserted {
            result.append(table)
        }
        return result
    }

    /// The query ready to run: `nil` when its table does not exist (per `exists`), subqueries over
    /// tables that do not exist answered as empty.
    package func resolved(exists: (TableDescription) throws -> Bool) rethrows -> SelectQuery? {
        guard try exists(table) else { return nil }
        var copy = self
        copy.predicate = try predicate?.resolvingSubqueries(exists: exists)
        return copy
    }

    /// ``resolved(exists:)`` for stores that check tables asynchronously.
    package func resolved(exists: (TableDescription) async throws -> Bool) async rethrows -> SelectQuery? {
        guard try await exists(table) else { return nil }
        var copy = self
        copy.predicate = try await predicate?.resolvingSubqueries(exists: exists)
        return copy
    }

    /// Every column the query reads, checked against the table before it runs.
    ///
    /// Every store calls it before it runs a query.
    ///
    /// - Throws: A ``DepotError`` of kind `.invalidQuery` naming the first column the table lacks
    ///   (in the predicate, the ordering, a subquery or ``limitPerGroup``), or a negative
    ///   ``limit``, ``offset`` or group limit.
    public func validate() throws {
        var names = predicate?.columns ?? []
        for term in ordering { names.formUnion(term.columns) }
        names.formUnion(columns ?? [])
        if let group = limitPerGroup {
            names.insert(group.column)
            if group.limit < 0 {
                throw DepotError(
                    .invalidQuery, "limit per group must not be negative (got \(group.limit))", table: table.name)
            }
        }
        for name in names { _ = try table.requireColumn(name) }
        try predicate?.refuseNotANumber(table: table.name)
        try predicate?.validateSubqueries()
        if let limit, limit < 0 {
            throw DepotError(.invalidQuery, "limit must not be negative (got \(limit))", table: table.name)
        }
        if let offset, offset < 0 {
            throw DepotError(.invalidQuery, "offset must not be negative (got \(offset))", table: table.name)
        }
    }
}

/// At most ``limit`` rows for each value of ``column``, in the query's order.
public struct GroupLimit: Sendable, Hashable {
    /// The column whose values form the groups.
    public var column: String
    /// The most rows kept per group.
    public var limit: Int

    /// At most `limit` rows per value of `column`; a negative `limit` fails the query with
    /// `.invalidQuery`.
    public init(column: String, limit: Int) {
        self.column = column
        self.limit = limit
    }
}
