import Depot

/// Compares a table as an engine stores it with what the entity declares; one definition of
/// "differs" for every SQL store.
public enum SchemaDrift {
    /// A column as the engine reports it.
    public struct StoredColumn: Sendable {
        public var name: String
        /// The declared type, as the engine spells it.
        public var type: String
        public var isNullable: Bool
        public var hasDefault: Bool

        public init(name: String, type: String, isNullable: Bool, hasDefault: Bool) {
            self.name = name
            self.type = type
            self.isNullable = isNullable
            self.hasDefault = hasDefault
        }
    }

    /// Throws `.schemaMismatch` listing every difference (column, expected, found) between
    /// `stored` and the columns `table` needs in `dialect` (its own and the dialect's folded
    /// copies), and between the stored primary key and the declared one.
    ///
    /// - Parameter typeName: how the engine spells a Depot type in `stored` (its schema tables
    ///   may not use the name the table was created with).
    public static func verify(
        _ table: TableDescription, stored: [StoredColumn], primaryKey: [String], dialect: SQLDialect,
        typeName: (ColumnType) -> String
    ) throws {
        let expected =
            table.columns
            + dialect.foldedColumns(table).map {
                TableDescription.ColumnDescription(name: $0, type: .text, isNullable: true)
            }
        let found = stored.map {
            SchemaComparison.StoredColumn(
                name: $0.name, type: $0.type, isNullable: $0.isNullable, hasDefault: $0.hasDefault)
        }
        let differences = SchemaComparison.differences(
            table, expected: expected, stored: found, primaryKey: primaryKey, typeName: typeName)
        if let error = SchemaComparison.mismatch(table, differences) { throw error }
    }
}
