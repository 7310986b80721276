extension MigrationOperation {
    /// Starts enforcing `relation` on a database that has rows already: the step fails, listing
    /// up to five offending rows, when any row's key names no row of the target — so a version
    /// that declares a new ``ToOne`` never opens on dangling references.
    ///
    /// ```swift
    /// Migration("3 airports reference countries", [.addForeignKey(Airport.country)])
    /// ```
    /// Depot enforces relations itself from then on, identically on every store (see
    /// ``ToOne``); no SQL constraint is created. The check is one query in the store.
    ///
    /// When the check fails, ``MigratableStore/migrate(_:to:progress:)`` throws a ``DepotError``
    /// of kind ``DepotError/Kind/migration`` naming the step, whose ``DepotError/underlying`` is
    /// the `.constraintViolation` listing the rows (or the `.invalidSchema` of a relation declared
    /// wrongly); the database stays at the previous version.
    public static func addForeignKey<Source: Entity, Target: Entity>(_ relation: ToOne<Source, Target>) -> Self {
        let key = relation.descriptor.foreignKey
        return .data("foreign key \(key.childTable.name).\(key.column) -> \(key.parentTable.name)") { tx in
            if let error = relation.descriptor.problems.first {
                throw DepotError(.invalidSchema, "relation \(key.name): \(error)", table: key.childTable.name)
            }
            let dangling = PredicateNode.and([
                .isNotNull(column: key.column),
                .not(
                    .isInSubquery(
                        column: key.column,
                        Subquery(table: key.parentTable, column: key.parentColumn, predicate: nil))),
            ])
            let child = key.childTable
            let keyIndices = child.primaryKeyIndices
            let columnIndex = try child.requireColumn(key.column)
            let offending = try await tx.writer.fetch(SelectQuery(table: child, predicate: dangling, limit: 5)) { row in
                "\(TableDescription.describeKey(keyIndices.map { row[$0] })) → "
                    + TableDescription.describeKey([row[columnIndex]])
            }
            guard !offending.isEmpty else { return }
            let total = try await tx.writer.count(SelectQuery(table: child, predicate: dangling))
            throw DepotError(
                .constraintViolation,
                "\(total) \(child.name) row(s) name no \(key.parent.name) in \(key.column) (relation \(key.name)): "
                    + offending.joined(separator: ", ") + (total > offending.count ? ", …" : ""),
                table: child.name, column: key.column)
        }
    }
}
