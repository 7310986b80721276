import Depot
import DepotSQL
import GRDB

/// Compares a stored table with what an entity declares.
enum SQLiteSchemaCheck {
    /// Throws `.schemaMismatch` listing every difference (column, expected, found).
    static func verify(_ table: TableDescription, in db: Database, dialect: SQLDialect) throws {
        let stored = try db.columns(in: table.name).map { column in
            SchemaDrift.StoredColumn(
                name: column.name, type: column.type, isNullable: !column.isNotNull,
                hasDefault: column.defaultValueSQL != nil)
        }
        try SchemaDrift.verify(
            table, stored: stored, primaryKey: try db.primaryKey(table.name).columns, dialect: dialect,
            typeName: dialect.typeName)
    }
}
