extension Repository {
    /// Moves the row with key `key` to place `index` (0-based) among its siblings in the ordered
    /// relation `relation`: the rows of `Root` with the same parent, in position order.
    ///
    /// ```swift
    /// try await runways.move(7, in: Airport.runways, to: 0)  // first among its airport's runways
    /// ```
    /// One row is written: its new position lies between its new neighbours'. Only when the two
    /// neighbours' positions are too close to split (after dozens of moves into the same gap) are
    /// the siblings renumbered 1, 2, 3, … first. An index past the end moves the row last.
    ///
    /// - Parameters:
    ///   - key: The primary key of the row to move.
    ///   - relation: The ordered relation (declared with `orderedBy:`) whose position it changes.
    ///   - index: The row's new place among its siblings, 0 first.
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `relation` is not ordered, `Root` has
    ///   a composite primary key, `index` is negative, or no row has key `key`; and the kinds
    ///   every call may throw (see ``Repository``).
    public func move<Parent: Entity, Key: StorableValue>(
        _ key: Key, in relation: ToMany<Parent, Root>, to index: Int
    ) async throws {
        let schema = try checkedSchema()
        let (parentColumn, positionColumn) = try orderColumns(relation)
        let keyNode = try keyPredicate([key.storedValue])
        let keyColumn = schema.columns[schema.primaryKeyIndices[0]].name
        guard index >= 0 else {
            throw DepotError(
                .invalidQuery, "move of \(Root.self) \(key): index must not be negative", table: schema.tableName)
        }
        try await context.atomically { writer in
            let table = schema.table
            let parentIndex = try table.requireColumn(parentColumn)
            guard
                let parent = try await writer.fetch(
                    SelectQuery(table: table, predicate: keyNode, limit: 1), decode: { $0[parentIndex] }
                ).first
            else {
                throw DepotError(
                    .invalidQuery, "move: no \(Root.self) with key \(TableDescription.describeKey([key.storedValue]))",
                    table: table.name)
            }
            let siblings = PredicateNode.and([
                parent.isNull ? .isNull(column: parentColumn) : .compare(column: parentColumn, .equal, parent),
                .not(keyNode),
            ])
            let positionIndex = try table.requireColumn(positionColumn)
            let index = Swift.min(index, try await writer.count(SelectQuery(table: table, predicate: siblings)))
            for attempt in 0..<2 {
                let neighbours = try await writer.fetch(
                    SelectQuery(
                        table: table, predicate: siblings, ordering: [.column(positionColumn, descending: false)],
                        limit: index == 0 ? 1 : 2, offset: Swift.max(index - 1, 0)),
                    decode: { $0[positionIndex].doubleValue ?? 0 })
                let before = index == 0 ? nil : neighbours.first
                let after = index == 0 ? neighbours.first : neighbours.dropFirst().first
                let position: Double
                switch (before, after) {
                case (nil, nil): position = 1
                case (let low?, nil): position = low + 1
                case (nil, let high?): position = high - 1
                case (let low?, let high?): position = low + (high - low) / 2
                }
                if (before.map { position > $0 } ?? true) && (after.map { position < $0 } ?? true) {
                    try await writer.write(
                        RowBatch(columns: [keyColumn, positionColumn], values: [key.storedValue, .double(position)]),
                        into: table, mode: .update)
                    return
                }
                guard attempt == 0 else { break }
                try await renumber(
                    table, siblings: siblings, keyColumn: keyColumn, positionColumn: positionColumn, writer)
            }
            throw DepotError(.invalidQuery, "move of \(Root.self): positions could not be split", table: table.name)
        }
    }

    /// The position that places a new row last among the rows of `relation` under `parent`:
    /// one more than the largest stored position (1 for the first row).
    ///
    /// ```swift
    /// let position = try await runways.nextPosition(in: Airport.runways, parent: "ENGM")
    /// try await runways.insert(Runway(id: 9, airport: "ENGM", position: position))
    /// ```
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `relation` is not ordered or `Root`
    ///   has a composite primary key, and the kinds every call may throw (see ``Repository``).
    public func nextPosition<Parent: Entity, Key: StorableValue>(
        in relation: ToMany<Parent, Root>, parent: Key
    ) async throws -> Double {
        let schema = try checkedSchema()
        let (parentColumn, positionColumn) = try orderColumns(relation)
        let index = try schema.table.requireColumn(positionColumn)
        let last = try await context.reader.fetch(
            SelectQuery(
                table: schema.table, predicate: .compare(column: parentColumn, .equal, parent.storedValue),
                ordering: [.column(positionColumn, descending: true)], limit: 1),
            decode: { $0[index].doubleValue ?? 0 }
        ).first
        return (last ?? 0) + 1
    }

    private func orderColumns<Parent: Entity>(_ relation: ToMany<Parent, Root>) throws -> (String, String) {
        guard let position = relation.descriptor.positionColumn else {
            throw DepotError(
                .invalidQuery, "\(relation.descriptor.name) is not ordered: declare it with orderedBy:",
                table: Root.schema.tableName)
        }
        guard Root.schema.primaryKeyIndices.count == 1 else {
            throw DepotError(
                .invalidQuery, "ordered relations need a one-column primary key on \(Root.self)",
                table: Root.schema.tableName)
        }
        return (relation.descriptor.foreignKey.column, position)
    }

    /// Rewrites the positions of `siblings` as 1, 2, 3, … in their current order.
    private func renumber(
        _ table: TableDescription, siblings: PredicateNode, keyColumn: String, positionColumn: String,
        _ writer: any StoreWriter
    ) async throws {
        let keyIndex = try table.requireColumn(keyColumn)
        let keys = try await writer.fetch(
            SelectQuery(table: table, predicate: siblings, ordering: [.column(positionColumn, descending: false)]),
            decode: { $0[keyIndex] })
        var values: [StoredValue] = []
        values.reserveCapacity(keys.count * 2)
        for (offset, key) in keys.enumerated() { values += [key, .double(Double(offset + 1))] }
        try await writer.write(
            RowBatch(columns: [keyColumn, positionColumn], values: values), into: table, mode: .update)
    }
}
