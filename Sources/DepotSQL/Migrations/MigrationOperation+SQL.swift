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
        .storeSpecific(SQLScripts(scripts: [(SQLiteDialect().name, sqlite), (PostgresDialect().name, postgres)]))
    }
}

/// The scripts of a raw SQL migration step, one per dialect (see
/// `MigrationOperation.sql(sqlite:postgres:)`).
struct SQLScripts: StoreSpecificOperation {
    /// Each dialect's name and its script (`nil`: none), in the order the step's checksum lists them.
    let scripts: [(dialect: String, script: String?)]

    /// The script for `dialect`; `nil` when the step has none.
    func script(for dialect: any SQLDialect) -> String? {
        scripts.first { $0.dialect == dialect.name }?.script ?? nil
    }

    /// The step's checksum text: `sql sqlite: … postgres: …` (`-` for a missing script), as
    /// ledgers written by every earlier version recorded it.
    var description: String {
        "sql " + scripts.map { "\($0.dialect): \($0.script ?? "-")" }.joined(separator: " ")
    }
}
