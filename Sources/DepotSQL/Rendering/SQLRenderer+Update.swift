import Depot

extension SQLRenderer {
    // MARK: - Set-based updates

    /// The one `UPDATE` of a set-based update.
    ///
    /// ```swift
    /// // counters.update(where: \.kind == "page", set: \.hits, to: \.hits + 1)
    /// // SQLite:     UPDATE "counters" SET "hits" = depot_add("hits", ?) WHERE "kind" = ?
    /// // PostgreSQL: UPDATE "counters" SET "hits" = "hits" + CAST($1 AS bigint) WHERE "kind" COLLATE "C" = $2
    /// ```
    ///
    /// Values are cast to the column's type on PostgreSQL (a bound text becomes `jsonb`, `uuid`…);
    /// SQLite adds through ``SQLFunctions/add``, which reports an overflow as PostgreSQL does.
    public func update(_ query: UpdateQuery) -> SQLStatement {
        var builder = ArgumentList(dialect: dialect)
        let table = query.table
        let sets = query.assignments.map { assignment -> String in
            let type = table.columns.first { $0.name == assignment.column }?.type ?? .text
            let value: String
            switch assignment.value {
            case .value(let stored):
                value = bound(stored, type, &builder)
            case .adding(let source, let addend):
                let addend = bound(addend, type, &builder)
                value = dialect.adding(quote(source), addend)
            }
            return "\(quote(assignment.column)) = \(value)"
        }
        var sql = "UPDATE \(quote(table.name)) SET " + sets.joined(separator: ", ")
        if let predicate = query.predicate {
            sql += " WHERE " + render(predicate, table, &builder)
        }
        return SQLStatement(sql: sql, arguments: builder.values)
    }

    /// `value`'s placeholder, cast to the column's type on PostgreSQL.
    private func bound(_ value: StoredValue, _ type: ColumnType, _ builder: inout ArgumentList) -> String {
        let placeholder = builder.add(value)
        return dialect.assigned(placeholder, type: type)
    }
}
