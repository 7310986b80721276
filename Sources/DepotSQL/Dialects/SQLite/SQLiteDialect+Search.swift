import Depot

extension SQLiteDialect {
    /// SQLite's word tables hold whole words.
    public func indexedWord(_ word: String) -> String { word }

    /// The word table (`WITHOUT ROWID`), the words of the rows there are, then its secondary
    /// indexes (faster after the backfill than while it runs), then the triggers. The insert and
    /// update triggers first drop the words of the key they write: `INSERT OR REPLACE` / `UPDATE
    /// OR REPLACE` remove the row they replace without firing delete triggers (unless
    /// `recursive_triggers` is on, which other clients need not set), and its words would stay.
    public func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let (words, name, base, key, text, keyType) = searchIndexNames(table, column)
        let insert = { (row: String) in
            "INSERT OR IGNORE INTO \(name) (\"word\", \"plain\", \"key\") SELECT value, "
                + "\(SQLFunctions.foldDiacritics)(value), \(row).\(key) FROM json_each(\(SQLFunctions.words)(\(row).\(text)))"
        }
        return [
            "CREATE TABLE \(name) (\"word\" TEXT NOT NULL, \"plain\" TEXT NOT NULL, \"key\" \(keyType) NOT NULL, "
                + "PRIMARY KEY (\"word\", \"key\")) WITHOUT ROWID",
            "INSERT OR IGNORE INTO \(name) (\"word\", \"plain\", \"key\") SELECT w.value, "
                + "\(SQLFunctions.foldDiacritics)(w.value), t.\(key) FROM \(base) AS t, "
                + "json_each(\(SQLFunctions.words)(t.\(text))) AS w",
            "CREATE INDEX \(quote(words.name + "#plain")) ON \(name) (\"plain\", \"key\")",
            "CREATE INDEX \(quote(words.name + "#key")) ON \(name) (\"key\")",
            "CREATE TRIGGER \(quote(words.name + "#insert")) AFTER INSERT ON \(base) BEGIN "
                + "DELETE FROM \(name) WHERE \"key\" = NEW.\(key); \(insert("NEW")); END",
            "CREATE TRIGGER \(quote(words.name + "#update")) AFTER UPDATE OF \(text), \(key) ON \(base) BEGIN "
                + "DELETE FROM \(name) WHERE \"key\" = OLD.\(key) OR \"key\" = NEW.\(key); \(insert("NEW")); END",
            "CREATE TRIGGER \(quote(words.name + "#delete")) AFTER DELETE ON \(base) BEGIN "
                + "DELETE FROM \(name) WHERE \"key\" = OLD.\(key); END",
        ]
    }

    /// The statements that drop the search index of `column` of `table` on SQLite: triggers, functions, word table.
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let words = TextSearch.wordTable(for: table, column: column).name
        return ["insert", "update", "delete"].map { "DROP TRIGGER IF EXISTS \(quote(words + "#" + $0))" }
            + ["DROP TABLE IF EXISTS \(quote(words))"]
    }

    /// The triggers go with their tables: no functions of their own.
    public var searchIndexFunctions: SQLStatement? { nil }
}
