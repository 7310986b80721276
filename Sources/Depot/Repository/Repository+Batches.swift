extension Repository {
    /// The entities matching `predicate` in primary-key order, `size` at a time: for work over
    /// more rows than should sit in memory at once (a migration's data step over a million rows).
    ///
    /// ```swift
    /// for try await batch in tx.repository(Airport.self).batches(of: 10_000) {
    ///     try await tx.repository(Airport.self).upsert(batch.map(convert))
    /// }
    /// ```
    /// Each batch is one query continuing after the last key of the previous one (keyset
    /// pagination), so rows written meanwhile behind that key are not read again, and no offset
    /// is ever skipped over. The last batch may be shorter; an empty table gives no batch.
    ///
    /// Inside a migration step run with a progress closure, each batch is reported as
    /// ``MigrationProgress/rows`` (the total counted once, by one more query, when the loop starts).
    ///
    /// Nothing runs until the loop asks for the first batch, and errors surface there: a
    /// ``DepotError`` of kind `.invalidQuery` when `size` is less than 1, or any kind a fetch may
    /// throw (see ``Repository``).
    public func batches(of size: Int, where predicate: Filter<Root>? = nil) -> RepositoryBatches<Root> {
        RepositoryBatches(repository: self, size: size, predicate: predicate)
    }
}

/// Batches of a repository's entities in primary-key order (see ``Repository/batches(of:where:)``).
public struct RepositoryBatches<Root: Entity>: AsyncSequence, Sendable {
    /// One batch: at most `size` entities, in primary-key order.
    public typealias Element = [Root]
    let repository: Repository<Root>
    let size: Int
    let predicate: Filter<Root>?

    /// A fresh iterator, starting again from the first key: each loop over the sequence reads the
    /// entities anew.
    public func makeAsyncIterator() -> Iterator { Iterator(batches: self) }

    /// Reads one batch per call to ``next()``.
    public struct Iterator: AsyncIteratorProtocol {
        let batches: RepositoryBatches
        var lastKey: [StoredValue]?
        var finished = false
        /// Rows read so far, and the rows the loop reads (counted on the first batch when a
        /// migration step reports its progress).
        var read = 0
        var total: Int?

        /// The next batch (one query), or `nil` after the last one.
        ///
        /// - Throws: ``DepotError`` of kind `.invalidQuery` when the batch size is less than 1, or
        ///   any kind a fetch may throw.
        public mutating func next() async throws -> [Root]? {
            guard !finished else { return nil }
            let schema = try batches.repository.checkedSchema()
            guard batches.size > 0 else {
                throw DepotError(
                    .invalidQuery, "batches of \(Root.self) must hold at least one row (got \(batches.size))",
                    table: schema.tableName)
            }
            var parts: [PredicateNode] = batches.predicate.map { [$0.node] } ?? []
            if let lastKey {
                parts.append(Self.after(lastKey, keys: schema.primaryKeyIndices.map { schema.columns[$0].name }))
            }
            let report = MigrationRowReporting.report
            if report != nil, total == nil { total = try await batches.repository.count(where: batches.predicate) }
            let query = SelectQuery(
                table: schema.table, predicate: parts.isEmpty ? nil : (parts.count == 1 ? parts[0] : .and(parts)),
                limit: batches.size)
            let batch = try await batches.repository.context.reader.scan(query) { cursor in
                try schema.decodeAll(&cursor)
            }
            if batch.count < batches.size { finished = true }
            guard let last = batch.last else { return nil }
            lastKey = schema.key(of: last)
            read += batch.count
            if let report, let total { report(read, Swift.max(total, read)) }
            return batch
        }

        /// Rows whose key sorts after `key`: (a > x) OR (a = x AND b > y) … for a composite key.
        static func after(_ key: [StoredValue], keys: [String]) -> PredicateNode {
            var alternatives: [PredicateNode] = []
            for position in keys.indices {
                var part: [PredicateNode] = (0..<position).map { .compare(column: keys[$0], .equal, key[$0]) }
                part.append(.compare(column: keys[position], .greater, key[position]))
                alternatives.append(part.count == 1 ? part[0] : .and(part))
            }
            return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
        }
    }
}
