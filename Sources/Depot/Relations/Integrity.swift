/// Referential integrity, applied by Depot through the store's own reads and writes, so that
/// every store enforces the same rules with the same errors.
enum Integrity {
    /// Throws unless every non-NULL value `batch` holds for a key in `keys` names a stored row of
    /// the key's parent table (or, for a key to its own table, a row of the batch).
    static func checkReferences(_ batch: RowBatch, keys: [ForeignKey], _ writer: any StoreWriter) async throws {
        let width = batch.columns.count
        for key in keys {
            guard let position = batch.columns.firstIndex(of: key.column) else { continue }
            var firstRow: [StoredValue: Int] = [:]
            for row in 0..<batch.count {
                let value = batch.values[row * width + position]
                if !value.isNull && firstRow[value] == nil { firstRow[value] = row }
            }
            guard !firstRow.isEmpty else { continue }
            let parent = key.parentTable
            let parentKey = parent.primaryKeyIndices[0]
            // The parents found stay until this transaction ends: a concurrent removal waits for it
            // (and then sees the new children), or, already under way, makes this check wait and fail.
            var parents = SelectQuery(table: parent, predicate: .isIn(column: key.parentColumn, Array(firstRow.keys)))
            parents.lock = .referenced
            var found = Set(try await writer.fetch(parents) { $0[parentKey] })
            if parent.name == key.childTable.name, let keyPosition = batch.columns.firstIndex(of: key.parentColumn) {
                for row in 0..<batch.count { found.insert(batch.values[row * width + keyPosition]) }
            }
            let missing = firstRow.filter { !found.contains($0.key) }.sorted { $0.value < $1.value }
            guard let (value, row) = missing.first else { continue }
            let rowKey = key.childTable.primaryKey.compactMap { name in
                batch.columns.firstIndex(of: name).map { batch.values[row * width + $0] }
            }
            let others = missing.count > 1 ? " (\(missing.count) values name no row)" : ""
            throw DepotError(
                .constraintViolation,
                "\(key.childTable.name) row \(TableDescription.describeKey(rowKey)): \(key.column) "
                    + "\(TableDescription.describeKey([value])) names no \(key.parent.name) "
                    + "(relation \(key.name))\(others)",
                table: key.childTable.name, column: key.column)
        }
    }

    /// Throws unless `value` (when not NULL) names a stored row of `key`'s parent table, which
    /// then stays until the transaction ends: what a set-based update assigning `key` checks.
    static func checkReference(_ value: StoredValue, key: ForeignKey, _ writer: any StoreWriter) async throws {
        guard !value.isNull else { return }
        var parents = SelectQuery(table: key.parentTable, predicate: .isIn(column: key.parentColumn, [value]))
        parents.lock = .referenced
        let parentKey = key.parentTable.primaryKeyIndices[0]
        guard try await writer.fetch(parents, decode: { $0[parentKey] }).isEmpty else { return }
        throw DepotError(
            .constraintViolation,
            "an update of \(key.childTable.name) sets \(key.column) to \(TableDescription.describeKey([value])), "
                + "which names no \(key.parent.name) (relation \(key.name))",
            table: key.childTable.name, column: key.column)
    }

    /// Removes the rows of `table` matching `predicate`, first applying the delete rules of the
    /// keys that reference them; returns how many rows of `table` were removed.
    static func delete(
        from table: TableDescription, entity: EntityType, where predicate: PredicateNode?,
        _ writer: any StoreWriter
    ) async throws -> Int {
        try await delete(from: table, entity: entity, where: predicate, writer, removing: RemovalSet())
    }

    /// Keys already being removed per table, so cycles (a self-referencing cascade) end.
    final class RemovalSet: @unchecked Sendable {
        // Used by one task at a time: the recursion below awaits each step in turn.
        var keys: [String: Set<StoredValue>] = [:]
    }

    private static func delete(
        from table: TableDescription, entity: EntityType, where predicate: PredicateNode?,
        _ writer: any StoreWriter, removing: RemovalSet
    ) async throws -> Int {
        let dependents = RelationDescriptor.dependents(of: entity)
        guard !dependents.isEmpty, table.primaryKey.count == 1 else {
            return try await writer.delete(from: table, where: predicate)
        }
        let keyColumn = table.primaryKey[0]
        let keyIndex = table.primaryKeyIndices[0]
        // Locked before the dependents are read: a transaction adding a child waits for this one
        // and fails, or this one waits for it and then sees the child.
        var matching = SelectQuery(table: table, predicate: predicate)
        matching.lock = .removed
        let matched = try await writer.fetch(matching) { $0[keyIndex] }
        var seen = removing.keys[table.name, default: []]
        let keys = matched.filter { seen.insert($0).inserted }
        removing.keys[table.name] = seen
        guard !keys.isEmpty else { return 0 }

        for key in dependents where key.rule == .deny {
            try await refuse(key, keys: keys, parent: entity, writer)
        }
        for key in dependents {
            let referencing = PredicateNode.isIn(column: key.column, keys)
            switch key.rule {
            case .deny, .noAction:
                continue
            case .cascade:
                _ = try await delete(
                    from: key.childTable, entity: key.child, where: referencing, writer, removing: removing)
            case .nullify:
                try await nullify(key.column, of: key.childTable, where: referencing, writer)
            }
        }
        return try await writer.delete(from: table, where: .isIn(column: keyColumn, keys))
    }

    /// Sets `column` to NULL in the rows of `table` matching `predicate` (an update by key).
    static func nullify(
        _ column: String, of table: TableDescription, where predicate: PredicateNode, _ writer: any StoreWriter
    ) async throws {
        let keyIndices = table.primaryKeyIndices
        let rows = try await writer.fetch(SelectQuery(table: table, predicate: predicate)) { row in
            keyIndices.map { row[$0] }
        }
        var values: [StoredValue] = []
        values.reserveCapacity(rows.count * (keyIndices.count + 1))
        for row in rows { values += row + [.null] }
        try await writer.write(
            RowBatch(columns: table.primaryKey + [column], values: values), into: table, mode: .update)
    }

    /// Throws if any row references `keys` through `key` (whose rule is deny), naming them.
    private static func refuse(
        _ key: ForeignKey, keys: [StoredValue], parent: EntityType, _ writer: any StoreWriter
    ) async throws {
        let child = key.childTable
        let referencing = PredicateNode.isIn(column: key.column, keys)
        let keyIndices = child.primaryKeyIndices
        let shown = 5
        let offending = try await writer.fetch(SelectQuery(table: child, predicate: referencing, limit: shown)) {
            row in TableDescription.describeKey(keyIndices.map { row[$0] })
        }
        guard !offending.isEmpty else { return }
        let total =
            offending.count < shown
            ? offending.count
            : try await writer.count(
                SelectQuery(table: child, predicate: referencing))
        let more = total > offending.count ? ", …" : ""
        throw DepotError(
            .constraintViolation,
            "cannot remove \(parent.name) rows: \(total) \(key.child.name) row(s) reference them through "
                + "\(key.name) (onDelete: .deny): \(offending.joined(separator: ", "))\(more)",
            table: child.name, column: key.column)
    }
}

/// Whether writes in this task check the ``ToOne`` keys they carry. Off only where the rows come
/// from a store that already enforced its relations (a sync engine storing what a server sent,
/// whose parents may arrive later or lie outside what the replica receives).
package enum ReferenceChecks {
    @TaskLocal package static var areSkipped = false
}
