import Depot

/// Compares a table as an engine stores it with what the entity declares; one definition of
/// "differs" for every SQL store.
package enum SchemaDrift {
    /// Throws `.schemaMismatch` listing every difference (column, expected, found) between
    /// `stored` and the columns `table` needs in `dialect` (its own and the dialect's folded
    /// copies), and between the stored primary key and the declared one.
    package static func verify(_ table: TableDescription, stored: [CatalogColumn], dialect: SQLDialect) throws {
        let expected =
            table.columns
            + dialect.foldedColumns(table).map {
                TableDescription.ColumnDescription(name: $0, type: .text, isNullable: true)
            }
        let columns = stored.map {
            SchemaComparison.StoredColumn(
                name: $0.name, type: $0.type, isNullable: !$0.isNotNull, hasDefault: $0.defaultSQL != nil)
        }
        let primaryKey = stored.filter { $0.keyPosition > 0 }.sorted { $0.keyPosition < $1.keyPosition }.map(\.name)
        let differences = SchemaComparison.differences(
            table, expected: expected, stored: columns, primaryKey: primaryKey, typeName: dialect.catalogTypeName)
        if let error = SchemaComparison.mismatch(table, differences) { throw error }
    }
}
