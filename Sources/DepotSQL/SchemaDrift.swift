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
        var differences: [String] = []
        var byName: [String: StoredColumn] = [:]
        for column in stored { byName[column.name] = column }
        let expected =
            table.columns
            + dialect.foldedColumns(table).map {
                TableDescription.ColumnDescription(name: $0, type: .text, isNullable: true)
            }
        for column in expected {
            let expectedType = typeName(column.type)
            guard let found = byName.removeValue(forKey: column.name) else {
                differences.append("column \(column.name): expected \(expectedType), found no column")
                continue
            }
            if found.type.uppercased() != expectedType.uppercased() {
                differences.append("column \(column.name): expected type \(expectedType), found \(found.type)")
            }
            if found.isNullable != column.isNullable {
                differences.append(
                    "column \(column.name): expected \(column.isNullable ? "NULL allowed" : "NOT NULL"), "
                        + "found \(found.isNullable ? "NULL allowed" : "NOT NULL")")
            }
        }
        for extra in byName.values.sorted(by: { $0.name < $1.name }) where !extra.isNullable && !extra.hasDefault {
            differences.append("column \(extra.name): not declared, and NOT NULL without a default")
        }
        if primaryKey != table.primaryKey {
            differences.append(
                "primary key: expected (\(table.primaryKey.joined(separator: ", "))), "
                    + "found (\(primaryKey.joined(separator: ", ")))")
        }
        guard differences.isEmpty else {
            throw DepotError(
                .schemaMismatch,
                "table '\(table.name)' does not match \(table.entityName): " + differences.joined(separator: "; "),
                table: table.name)
        }
    }
}
