import Depot
import DepotSQL
import GRDB

/// Compares a stored table with what an entity declares.
enum SQLiteSchemaCheck {
    /// Throws `.schemaMismatch` listing every difference (column, expected, found).
    static func verify(_ table: TableDescription, in db: Database, dialect: SQLDialect) throws {
        let stored = try db.columns(in: table.name)
        var differences: [String] = []
        var byName: [String: ColumnInfo] = [:]
        for column in stored { byName[column.name] = column }
        for column in table.columns {
            guard let found = byName.removeValue(forKey: column.name) else {
                differences.append("column \(column.name): expected \(dialect.typeName(column.type)), found no column")
                continue
            }
            let expectedType = dialect.typeName(column.type)
            if found.type.uppercased() != expectedType {
                differences.append("column \(column.name): expected type \(expectedType), found \(found.type)")
            }
            if found.isNotNull == column.isNullable {
                differences.append(
                    "column \(column.name): expected \(column.isNullable ? "NULL allowed" : "NOT NULL"), "
                        + "found \(found.isNotNull ? "NOT NULL" : "NULL allowed")")
            }
        }
        for extra in byName.values where extra.isNotNull && extra.defaultValueSQL == nil {
            differences.append("column \(extra.name): not declared, and NOT NULL without a default")
        }
        let key = try db.primaryKey(table.name).columns
        if key != table.primaryKey {
            differences.append(
                "primary key: expected (\(table.primaryKey.joined(separator: ", "))), found (\(key.joined(separator: ", ")))"
            )
        }
        guard differences.isEmpty else {
            throw DepotError(
                .schemaMismatch,
                "table '\(table.name)' does not match \(table.entityName): " + differences.joined(separator: "; "),
                table: table.name)
        }
    }
}
