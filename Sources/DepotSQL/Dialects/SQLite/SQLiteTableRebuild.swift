import Depot

extension SQLMigrator {
    /// Changes `column` of SQLite table `table` by SQLite's own procedure for changes `ALTER TABLE`
    /// cannot make (sqlite.org/lang_altertable.html, "other kinds of table schema changes"): a new
    /// table from the stored definition with only that column's type and nullability changed
    /// (`UNIQUE`, `CHECK`, `COLLATE`, `REFERENCES`, `DEFAULT` and table constraints kept), the rows
    /// copied, the old table dropped, the new one renamed, its indexes and triggers created again.
    /// The step runs with foreign keys suspended (see `withMigrationSession(rebuildsTables:_:)`), so
    /// the drop deletes nothing in other tables, and fails before committing if a reference broke.
    static func rebuildSQLiteTable(
        _ table: String, changing column: TableDescription.ColumnDescription, stored: [CatalogColumn],
        _ session: any SQLMigrationSession
    ) async throws {
        let dialect = SQLiteDialect()
        let renderer = SQLRenderer(dialect: dialect)
        let q = dialect.quote
        let entries = try await session.texts(SQLiteDialect.definitions(of: table))
        guard let created = entries.first(where: { $0.first == "table" })?.last ?? nil else {
            throw DepotError(.migration, "table '\(table)' has no definition in sqlite_master", table: table)
        }
        // Automatic indexes (behind UNIQUE and PRIMARY KEY) have no SQL: the definition recreates them.
        let dependents = entries.filter { $0.first == "index" || $0.first == "trigger" }.compactMap { $0.last ?? nil }
        var definition = try SQLiteTableDefinition(created, table: table)
        try definition.alter(
            column: column.name, typeName: dialect.typeName(column.type), notNull: !column.isNullable)
        let rebuilt = table + "#rebuild"
        try await session.execute(definition.sql(named: q(rebuilt)))
        let names = stored.map { q($0.name) }.joined(separator: ", ")
        let values = stored.map { existing in
            existing.name == column.name ? sqliteCast(q(existing.name), to: column.type) : q(existing.name)
        }.joined(separator: ", ")
        try await session.execute(SQLiteDialect.copyRows(into: rebuilt, from: table, columns: names, values: values))
        try await session.execute(renderer.dropTable(table))
        // The legacy rename leaves views and triggers that name the table alone: they name it again
        // once the new table has its name.
        try await session.execute(SQLiteDialect.legacyAlterTable(true))
        do {
            try await session.execute(renderer.renameTable(rebuilt, to: table))
        } catch {
            try? await session.execute(SQLiteDialect.legacyAlterTable(false))
            throw error
        }
        try await session.execute(SQLiteDialect.legacyAlterTable(false))
        for statement in dependents { try await session.execute(SQLStatement(sql: statement)) }
    }

    static func sqliteCast(_ expression: String, to type: ColumnType) -> String {
        switch type {
        // `CAST('1e3' AS INTEGER)` is 1 (the longest integer prefix): a whole number spelled with
        // a fraction or an exponent goes through REAL, as in memory and on PostgreSQL.
        case .integer:
            "CASE WHEN typeof(\(expression)) = 'text' AND \(expression) GLOB '*[.eE]*' "
                + "THEN CAST(CAST(\(expression) AS REAL) AS INTEGER) ELSE CAST(\(expression) AS INTEGER) END"
        case .bool: "CAST(\(expression) AS INTEGER)"
        case .double, .date: "CAST(\(expression) AS REAL)"
        case .text, .decimal, .url, .json: "CAST(\(expression) AS TEXT)"
        case .blob, .uuid: expression
        }
    }
}

extension SQLiteDialect {
    /// The definitions `sqlite_master` holds for `table` — the table's, its indexes' and its
    /// triggers' — as rows of type and SQL, in the order they were created.
    public static func definitions(of table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT type, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
            arguments: [.text(table)])
    }

    /// Copies every row of `table` into `target`: `columns` (quoted, joined) from `values` (the
    /// expressions reading them, converting the changed column).
    public static func copyRows(into target: String, from table: String, columns: String, values: String) -> String {
        let dialect = SQLiteDialect()
        return "INSERT INTO \(dialect.quote(target)) (\(columns)) SELECT \(values) FROM \(dialect.quote(table))"
    }

    /// `PRAGMA legacy_alter_table`: on, a rename leaves views and triggers that name the table as
    /// they are.
    public static func legacyAlterTable(_ on: Bool) -> String { "PRAGMA legacy_alter_table = \(on ? "ON" : "OFF")" }
}
