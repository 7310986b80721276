import Depot

extension MigrationOperation {
    /// Raw SQL for each SQL dialect (statements separated by `;`, run as the engine splits
    /// them: literals, quoted names and `$$` bodies keep their semicolons). A store whose dialect
    /// has no script fails the step, naming it; the in-memory store fails every SQL step.
    ///
    /// ```swift
    /// Migration("2 seed", [
    ///     .sql(
    ///         sqlite: "INSERT INTO ports (code) VALUES ('ENGM')",
    ///         postgres: "INSERT INTO ports (code) VALUES ('ENGM')")
    /// ])
    /// ```
    public static func sql(sqlite: String? = nil, postgres: String? = nil) -> Self {
        .sql([
            RawSQL(dialect: SQLiteDialect().name, script: sqlite),
            RawSQL(dialect: PostgresDialect().name, script: postgres),
        ])
    }
}
