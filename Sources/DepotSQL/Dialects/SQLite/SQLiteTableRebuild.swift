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
        let dialect = session.dialect
        let q = dialect.quote
        let entries = try await session.texts(
            SQLStatement(
                sql: "SELECT type, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
                arguments: [.text(table)]))
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
        try await session.execute("INSERT INTO \(q(rebuilt)) (\(names)) SELECT \(values) FROM \(q(table))")
        try await session.execute("DROP TABLE \(q(table))")
        // The legacy rename leaves views and triggers that name the table alone: they name it again
        // once the new table has its name.
        try await session.execute("PRAGMA legacy_alter_table = ON")
        do {
            try await session.execute("ALTER TABLE \(q(rebuilt)) RENAME TO \(q(table))")
        } catch {
            try? await session.execute("PRAGMA legacy_alter_table = OFF")
            throw error
        }
        try await session.execute("PRAGMA legacy_alter_table = OFF")
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
