import Depot

/// A batch write that binds one array per column (PostgreSQL's `UNNEST`), so a statement carries
/// thousands of rows in a handful of parameters.
public struct ArrayWrite: Sendable, Hashable {
    /// The statement; parameter `$k` is the array of the batch's column `k`.
    public var sql: String
    /// The storage type of each batch column, in parameter order.
    public var columnTypes: [ColumnType]
}

extension PostgresDialect {
    /// The `INSERT … SELECT FROM UNNEST(…)` (insert, upsert) or `UPDATE … FROM UNNEST(…)` (update)
    /// writing a batch with `columns` into `table`.
    ///
    /// Decimals and JSON travel as text arrays and are cast by the server.
    public func arrayWrite(into table: TableDescription, columns: [String], mode: WriteMode) -> ArrayWrite {
        // The writer validated the batch's columns against the table.
        let types = columns.map { name in table.columns.first { $0.name == name }?.type ?? .text }
        let arrays = types.enumerated().map { "CAST($\($0.offset + 1) AS \(typeName($0.element))[])" }
            .joined(separator: ", ")
        return ArrayWrite(
            sql: batchWrite(into: table, columns: columns, mode: mode, from: "UNNEST(\(arrays))"), columnTypes: types)
    }

    /// The statement writing a batch with `columns` into `table` from `source`, a table expression
    /// whose columns are the batch's, in order: arrays unnested, or a staging table a `COPY` filled.
    public func batchWrite(into table: TableDescription, columns: [String], mode: WriteMode, from source: String)
        -> String
    {
        let keys = Set(table.primaryKey)
        let assigned = columns.filter { !keys.contains($0) }
        switch mode {
        case .insert, .upsert:
            var sql =
                "INSERT INTO \(quote(table.name)) (" + columns.map(quote).joined(separator: ", ")
                + ") SELECT * FROM \(source)"
            if mode == .upsert {
                let keys = table.primaryKey.map(quote).joined(separator: ", ")
                sql +=
                    assigned.isEmpty
                    ? " ON CONFLICT (\(keys)) DO NOTHING"
                    : " ON CONFLICT (\(keys)) DO UPDATE SET "
                        + assigned.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
                        + unchangedRowsSkipped(in: table, columns: assigned)
            }
            return sql
        case .update:
            let alias = columns.indices.map { "c\($0 + 1)" }
            func value(_ name: String) -> String { "u." + alias[columns.firstIndex(of: name) ?? 0] }
            let sets = assigned.map { "\(quote($0)) = \(value($0))" }.joined(separator: ", ")
            let match = table.primaryKey.map { "\(quote(table.name)).\(quote($0)) = \(value($0))" }
                .joined(separator: " AND ")
            // A row that holds the values already is left alone, and not counted.
            let changed = assigned.map { differs("\(quote(table.name)).\(quote($0))", value($0)) }
                .joined(separator: " OR ")
            return "UPDATE \(quote(table.name)) SET \(sets) FROM \(source) AS u("
                + alias.joined(separator: ", ") + ") WHERE \(match)" + (assigned.isEmpty ? "" : " AND (\(changed))")
        }
    }
}
