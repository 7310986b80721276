import Depot

/// Compares a table as an engine stores it with what the entity declares; one definition of
/// "differs" for every SQL store.
package enum SchemaDrift {
    /// Throws `.schemaMismatch` listing every difference (column, expected, found) between
    /// `stored` and the columns of `table`, and between the stored primary key and the declared
    /// one. Folded copies an earlier Depot kept on PostgreSQL are not differences.
    package static func verify(
        _ table: TableDescription, stored: [CatalogColumn], indexes: [IndexDescription] = [], dialect: any SQLDialect
    ) throws {
        let expected = table.columns
        let columns = stored.filter { !isLegacyFoldedCopy($0.name, in: stored) }.map {
            SchemaComparison.StoredColumn(
                name: $0.name, type: $0.type, isNullable: !$0.isNotNull, hasDefault: $0.defaultSQL != nil)
        }
        let primaryKey = stored.filter { $0.keyPosition > 0 }.sorted { $0.keyPosition < $1.keyPosition }.map(\.name)
        let differences =
            SchemaComparison.differences(
                table, expected: expected, stored: columns, primaryKey: primaryKey, typeName: dialect.catalogTypeName)
            + SchemaComparison.indexDifferences(table, stored: indexes)
        if let error = SchemaComparison.mismatch(table, differences) { throw error }
    }

    /// Whether `name` is the folded copy of another of `columns` that an earlier Depot kept on
    /// PostgreSQL (``SQLNames/legacyFoldedColumn(_:)``), nullable text that nothing reads.
    package static func isLegacyFoldedCopy(_ name: String, in columns: [CatalogColumn]) -> Bool {
        name.hasSuffix(SQLNames.legacyFoldedColumn(""))
            && columns.contains { SQLNames.legacyFoldedColumn($0.name) == name && $0.name != name }
            && columns.contains { $0.name == name && !$0.isNotNull }
    }
}
