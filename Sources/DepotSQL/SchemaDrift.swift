import Depot

/// Compares a table as an engine stores it with what the entity declares; one definition of
/// "differs" for every SQL store.
package enum SchemaDrift {
    /// A column as the engine reports it.
    package typealias StoredColumn = SchemaComparison.StoredColumn

    /// Throws `.schemaMismatch` listing every difference (column, expected, found) between
    /// `stored` and the columns `table` needs in `dialect` (its own and the dialect's folded
    /// copies), and between the stored primary key and the declared one.
    ///
    /// - Parameter typeName: how the engine spells a Depot type in `stored` (its schema tables
    ///   may not use the name the table was created with).
    package static func verify(
        _ table: TableDescription, stored: [StoredColumn], primaryKey: [String], dialect: SQLDialect,
        typeName: (ColumnType) -> String
    ) throws {
        let expected =
            table.columns
            + dialect.foldedColumns(table).map {
                TableDescription.ColumnDescription(name: $0, type: .text, isNullable: true)
            }
        let differences = SchemaComparison.differences(
            table, expected: expected, stored: stored, primaryKey: primaryKey, typeName: typeName)
        if let error = SchemaComparison.mismatch(table, differences) { throw error }
    }
}
