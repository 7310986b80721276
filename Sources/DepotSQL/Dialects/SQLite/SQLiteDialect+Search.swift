import Depot

/// SQLite's search index: an FTS5 table over the column, tokenized by Depot's `depot` tokenizer
/// (DepotSQLite registers it on every connection: its tokens are `TextSearch.words(of:)`), with
/// external content (the words point at the table's rows by `rowid`; the text is not copied) and
/// prefix indexes for 2, 3 and 4 bytes.
///
/// Plain-SQL triggers append each change to a queue table (`<table>#<column>#words#queue`): the
/// row, and the text it had when the index last held it. Depot folds the queue into the index
/// (``SearchQueue``) before a commit and before a search that reads it. Writing FTS5 from the
/// triggers themselves costs about ten times the insert (each triggering statement flushes FTS5's
/// pending terms); a queue costs one small row, and the fold writes the index in one statement.
/// Other clients (the `sqlite3` shell, without Depot's tokenizer) write the table as usual: their
/// changes wait in the queue.
extension SQLiteDialect {
    /// FTS5 holds whole words.
    public func indexedWord(_ word: String) -> String { word }

    /// The FTS5 table, its queue, then the triggers; ``searchIndexFill(on:column:)`` indexes the
    /// rows there are.
    ///
    /// The queue rows say `(rid, held, was)`: the row's rowid, and whether the index held it, with
    /// text `was`, before this change. A row's first queue entry is the one that counts: the
    /// fold deletes what the index held then (FTS5's `'delete'` must be given exactly what was
    /// indexed), then indexes the row's text now, if the row is still there. `INSERT OR REPLACE`
    /// and `UPDATE OR REPLACE` remove the rows they replace without firing delete triggers, so the
    /// `BEFORE` triggers record every row that holds the written key, or the written values of a
    /// unique index of `table.indexes` (the migrator passes the catalog's), already. Recording a
    /// row that stays is harmless (the fold indexes it again); missing one would leave its words.
    public func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let (words, name, base, text) = searchIndexNames(table, column)
        let queue = quote(words + "#queue")
        let trigger = { (suffix: String) in self.quote(words + "#" + suffix) }
        // The key and each unique index: a row holding the written values of any is replaced.
        var unique = table.primaryKey.isEmpty ? [] : [table.primaryKey]
        for index in table.indexes where index.isUnique && !index.columns.isEmpty && !unique.contains(index.columns) {
            unique.append(index.columns)
        }
        let conflicts = unique.map { columns in
            "(" + columns.map { "\(quote($0)) = NEW.\(quote($0))" }.joined(separator: " AND ") + ")"
        }.joined(separator: " OR ")
        var watched: [String] = []
        for column in unique.joined() where !watched.contains(column) { watched.append(column) }
        let replaced =
            "INSERT INTO \(queue) (rid, held, was) SELECT rowid, 1, \(text) FROM \(base) WHERE (\(conflicts))"
        // A table without key or unique index has no row a REPLACE removes: no BEFORE triggers.
        let replacing =
            unique.isEmpty
            ? []
            : [
                "CREATE TRIGGER \(trigger("replace")) BEFORE INSERT ON \(base) BEGIN \(replaced); END",
                "CREATE TRIGGER \(trigger("rekey")) BEFORE UPDATE OF \(watched.map(quote).joined(separator: ", ")) "
                    + "ON \(base) WHEN \(watched.map { "NEW.\(quote($0)) IS NOT OLD.\(quote($0))" }.joined(separator: " OR ")) "
                    + "BEGIN \(replaced) AND rowid <> OLD.rowid; END",
            ]
        let updated = ([column] + table.primaryKey.filter { $0 != column }).map(quote).joined(separator: ", ")
        return [
            "CREATE VIRTUAL TABLE \(name) USING fts5(\(text), content=\(literal(table.name)), content_rowid='rowid', "
                + "tokenize='depot', prefix='2 3 4', columnsize=0)",
            "CREATE TABLE \(queue) (rid INTEGER NOT NULL, held INTEGER NOT NULL, was TEXT)",
        ] + replacing + [
            "CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(base) BEGIN "
                + "INSERT INTO \(queue) (rid, held, was) VALUES (NEW.rowid, 0, NULL); END",
            "CREATE TRIGGER \(trigger("update")) AFTER UPDATE OF \(updated) ON \(base) BEGIN "
                + "INSERT INTO \(queue) (rid, held, was) VALUES (OLD.rowid, 1, OLD.\(text)), (NEW.rowid, 0, NULL); END",
            "CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(base) BEGIN "
                + "INSERT INTO \(queue) (rid, held, was) VALUES (OLD.rowid, 1, OLD.\(text)); END",
        ]
    }

    /// The statements that drop the search index of `column` of `table` on SQLite: triggers, queue,
    /// FTS5 table (or the word table of Depot versions before FTS5, whose triggers had the same names).
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let words = TextSearch.wordTable(for: table, column: column).name
        return ["replace", "insert", "rekey", "update", "delete"].map {
            "DROP TRIGGER IF EXISTS \(quote(words + "#" + $0))"
        } + ["DROP TABLE IF EXISTS \(quote(words + "#queue"))", "DROP TABLE IF EXISTS \(quote(words))"]
    }

    /// The triggers go with their tables: no functions of their own.
    public var searchIndexFunctions: SQLStatement? { nil }

    /// The queue table: a search checks that it is there (a word table of a Depot version before
    /// FTS5 has none; `SQLMigrator` rebuilds those).
    public func searchIndexProbe(for table: TableDescription, column: String) -> SearchIndexProbe {
        let words = TextSearch.wordTable(for: table, column: column)
        return .table(
            TableDescription(
                name: words.name + "#queue", entityName: "\(table.entityName) search queue of \(column)",
                columns: [
                    .init(name: "rid", type: .integer, isNullable: false),
                    .init(name: "held", type: .integer, isNullable: false),
                    .init(name: "was", type: .text, isNullable: true),
                ], primaryKey: []))
    }

    /// The rows in `rowid` order, in batches: FTS5 indexes each row inserted with its rowid and
    /// text (what `'rebuild'` does for all rows at once).
    public func searchIndexFill(on table: TableDescription, column: String) -> SearchIndexFill? {
        let (_, name, base, text) = searchIndexNames(table, column)
        let rows = "FROM \(base) WHERE rowid > ? ORDER BY rowid LIMIT ?"
        return SearchIndexFill(
            count: SQLStatement(sql: "SELECT count(*) FROM \(base)"),
            next: { after, limit in
                SQLStatement(
                    sql: "SELECT max(rowid), count(*) FROM (SELECT rowid \(rows))",
                    arguments: [.integer(after), .integer(Int64(limit))])
            },
            fill: { after, limit in
                SQLStatement(
                    sql: "INSERT INTO \(name) (rowid, \(text)) SELECT rowid, \(text) \(rows)",
                    arguments: [.integer(after), .integer(Int64(limit))])
            })
    }

    /// Every unique index but the primary key's: `INSERT OR REPLACE` removes the rows any of them
    /// conflicts with, without firing delete triggers.
    public func searchReplacingIndexes(of table: String) -> SQLStatement? {
        SQLStatement(
            sql: "SELECT name FROM pragma_index_list(?) WHERE \"unique\" = 1 AND origin <> 'pk' ORDER BY name",
            arguments: [.text(table)])
    }

    /// FTS5 tables (and legacy word tables) are tables.
    public var searchIndexCatalog: SQLStatement { catalogTables }

    /// FTS5 points at rows by rowid: a `WITHOUT ROWID` table has none.
    public func searchIndexRefusal(on table: String) -> (query: SQLStatement, reason: String)? {
        (
            SQLStatement(
                sql: "SELECT count(*) FROM pragma_table_list WHERE schema = 'main' AND name = ? AND wr = 1",
                arguments: [.text(table)]),
            "a search index on SQLite points at rows by rowid, and '\(table)' is a WITHOUT ROWID table"
        )
    }

    /// The word tables of Depot versions before FTS5 (plain tables named `…#words`).
    public var legacySearchIndexes: SQLStatement? {
        SQLStatement(
            sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%#words' "
                + "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")
    }

    /// Whether the queue holds changes, and the statements that fold them into the index.
    public func searchQueue(table: String, column: String) -> SearchQueue? {
        let words = TextSearch.wordTable(
            for: TableDescription(name: table, entityName: table, columns: [], primaryKey: []), column: column
        ).name
        let (name, queue, base, text) = (quote(words), quote(words + "#queue"), quote(table), quote(column))
        return SearchQueue(
            pending: SQLStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM \(queue) LIMIT 1)"),
            fold: [
                SQLStatement(
                    sql: "INSERT INTO \(name) (\(name), rowid, \(text)) SELECT 'delete', rid, was FROM \(queue) "
                        + "WHERE held = 1 AND rowid IN (SELECT min(rowid) FROM \(queue) WHERE rid IN "
                        + "(SELECT rid FROM \(queue) WHERE held = 1) GROUP BY rid)"),
                SQLStatement(
                    sql: "INSERT INTO \(name) (rowid, \(text)) SELECT rowid, \(text) FROM \(base) "
                        + "WHERE rowid IN (SELECT rid FROM \(queue))"),
                SQLStatement(sql: "DELETE FROM \(queue)"),
            ])
    }

    /// `"table".rowid IN (SELECT rowid FROM <fts> WHERE <fts> MATCH ?)`: each token a prefix
    /// term, all required (`"osl"* AND "gard"*`); ignoring diacritics, a token also matches the
    /// marked diacritic-free forms (`("sao"* OR "\u{1}sao"*)`).
    public func searchMatches(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        guard !tokens.isEmpty else { return "1 = 1" }
        return rowsMatching(matchExpression(tokens, matching), column, table, &arguments)
    }

    /// The FTS5 query of `tokens`: each a prefix term, all required (`"osl"* AND "gard"*`);
    /// ignoring diacritics, a token also matches the marked diacritic-free forms.
    private func matchExpression(_ tokens: [String], _ matching: TextMatching) -> String {
        tokens.map { token in
            matching == .caseAndDiacriticInsensitive ? "(\"\(token)\"* OR \"\u{1}\(token)\"*)" : "\"\(token)\"*"
        }.joined(separator: " AND ")
    }

    /// `SELECT count(*) FROM <fts> WHERE <fts> MATCH ?`: the index holds each row of the table
    /// once (the queue folded), so it counts them without looking a row up.
    public func searchCount(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String? {
        guard !tokens.isEmpty else { return nil }
        let (index, match) = indexMatch(matchExpression(tokens, matching), column, table, &arguments)
        return "SELECT count(*) FROM \(index) WHERE \(match)"
    }

    /// How many of the row's words equal a token, most first, then the text's length. Counting
    /// case-insensitively, one whole-word lookup per token (a word equals at most one token);
    /// ignoring diacritics, two words may fold to one token, so `depot_exact_words` counts them.
    public func searchRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        let text = "\(quote(table.name)).\(quote(column))"
        let byLength = ordering("length(\(text))", descending: false)
        guard !tokens.isEmpty else { return byLength }
        let exact: String
        if matching == .caseAndDiacriticInsensitive {
            exact = "\(SQLFunctions.exactWords)(\(text), \(arguments.add(.text(tokens.joined(separator: "\u{1}")))))"
        } else {
            // Each lookup in parentheses: `a IN (…) + b IN (…)` would parse as `a IN ((…) + b) IN (…)`.
            exact =
                "("
                + tokens.map { "(\(rowsMatching("\"\($0)\"", column, table, &arguments)))" }
                .joined(separator: " + ") + ")"
        }
        return "\(exact) DESC, \(byLength)"
    }

    /// `"table".rowid IN (SELECT rowid FROM <fts> WHERE <fts> MATCH ?)` with `expression` bound,
    /// passed through the check that the queue is empty: the argument of `MATCH` is evaluated
    /// before FTS5 looks anything up (a separate constant condition would be checked only once a
    /// row came, and a stale index may have none).
    private func rowsMatching(
        _ expression: String, _ column: String, _ table: TableDescription, _ arguments: inout ArgumentList
    ) -> String {
        let (index, match) = indexMatch(expression, column, table, &arguments)
        return "\(quote(table.name)).rowid IN (SELECT rowid FROM \(index) WHERE \(match))"
    }

    /// The quoted FTS5 table and `<fts> MATCH depot_search_ready(<queue holds changes>, ?)`.
    private func indexMatch(
        _ expression: String, _ column: String, _ table: TableDescription, _ arguments: inout ArgumentList
    ) -> (index: String, match: String) {
        let words = TextSearch.wordTable(for: table, column: column).name
        let index = quote(words)
        let pending = "(SELECT count(*) FROM (SELECT 1 FROM \(quote(words + "#queue")) LIMIT 1))"
        return (index, "\(index) MATCH \(SQLFunctions.searchReady)(\(pending), \(arguments.add(.text(expression))))")
    }
}
