import Depot

extension SQLFunctions {
    /// `depot_words(text)`: the distinct words of a text (`TextSearch.words(of:)`): a JSON array
    /// on SQLite (read with `json_each`), a set of rows on PostgreSQL.
    public static let words = "depot_words"
}

extension SQLRenderer {
    // MARK: - Search

    /// `"key" IN (SELECT "key" FROM <words> WHERE "word" >= ? AND "word" < ?)` for each token:
    /// a range over the word table's primary key (words in byte order; no word holds U+10FFFF,
    /// so every word starting with the token sorts below the token followed by it).
    func renderMatches(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        guard !tokens.isEmpty else { return "1 = 1" }
        let words = TextSearch.wordTable(for: table, column: column)
        let key = quote(table.primaryKey.first ?? "")
        let field = quote(matching == .caseAndDiacriticInsensitive ? "plain" : "word")
        return tokens.map { token in
            let indexed = indexedWord(token)
            let low = arguments.add(.text(indexed))
            let high = arguments.add(.text(indexed + "\u{10FFFF}"))
            let candidates =
                "\(key) IN (SELECT \"key\" FROM \(quote(words.name)) WHERE \(field) >= \(low) AND \(field) < \(high))"
            guard indexed != token else { return candidates }
            // A token longer than what the index holds of a word: the index finds the rows whose
            // words share what it holds, and the row's own words decide.
            let word = matching == .caseAndDiacriticInsensitive ? "\(SQLFunctions.foldDiacritics)(w)" : "w"
            let from = arguments.add(.text(token))
            let to = arguments.add(.text(token + "\u{10FFFF}"))
            return
                "\(candidates) AND EXISTS (SELECT 1 FROM \(SQLFunctions.words)(\(quote(table.name)).\(quote(column))) "
                + "AS depot_x(w) WHERE \(word) COLLATE \"C\" >= \(from) AND \(word) COLLATE \"C\" < \(to))"
        }.joined(separator: " AND ")
    }

    /// How many characters of a word PostgreSQL's word tables hold: a B-tree entry holds at most
    /// about 2.7 KB, and 200 characters are at most 800 bytes of UTF-8. Longer words are stored
    /// cut there; a longer query word finds its rows through what the index holds, then a check of
    /// the row's own words.
    /// SQLite's word tables hold whole words.
    public static let postgresIndexedWordLength = 200

    /// What the word table holds of `word` (the whole word on SQLite).
    func indexedWord(_ word: String) -> String {
        guard dialect == .postgres, word.unicodeScalars.count > Self.postgresIndexedWordLength else { return word }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: word.unicodeScalars.prefix(Self.postgresIndexedWordLength))
        return String(cut)
    }

    /// The relevance order: how many of the row's words equal a token, most first, then the
    /// text's length, shortest (and NULL) first.
    func renderRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        let words = TextSearch.wordTable(for: table, column: column)
        let field = matching == .caseAndDiacriticInsensitive ? "plain" : "word"
        let length = "length(\(quote(table.name)).\(quote(column)))"
        let byLength = dialect == .postgres ? "\(length) ASC NULLS FIRST" : length
        // No query word: every row counts 0 whole words (and a bare 0 would name a column to SQLite).
        guard !tokens.isEmpty else { return byLength }
        let list = tokens.map { arguments.add(.text(indexedWord($0))) }.joined(separator: ", ")
        let exact =
            "(SELECT count(*) FROM \(quote(words.name)) AS depot_w WHERE depot_w.\"key\" = "
            + "\(quote(table.name)).\(quote(table.primaryKey.first ?? "")) AND depot_w.\(quote(field)) IN (\(list)))"
        return "\(exact) DESC, \(byLength)"
    }

    /// The statements that create the search index of `column` of `table` in `schema` (the
    /// connection's current schema on PostgreSQL, `nil` on SQLite): the word table, its indexes,
    /// the words of the rows there are, and the triggers that keep it up to date.
    public func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let words = TextSearch.wordTable(for: table, column: column)
        let name = quote(words.name)
        let base = quote(table.name)
        let key = quote(table.primaryKey.first ?? "")
        let text = quote(column)
        let keyType = dialect.typeName(words.columns[2].type)
        let prefix = schema.map { quote($0) + "." } ?? ""
        switch dialect {
        case .sqlite:
            let insert = { (row: String) in
                "INSERT OR IGNORE INTO \(name) (\"word\", \"plain\", \"key\") SELECT value, "
                    + "\(SQLFunctions.foldDiacritics)(value), \(row).\(key) FROM json_each(\(SQLFunctions.words)(\(row).\(text)))"
            }
            // The secondary indexes come after the backfill (faster than keeping them while it
            // runs). The insert and update triggers first drop the words of the key they write:
            // `INSERT OR REPLACE` / `UPDATE OR REPLACE` remove the row they replace without
            // firing delete triggers (unless `recursive_triggers` is on, which other clients need
            // not set), and its words would stay behind.
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
        case .postgres:
            // Words as the index holds them: cut to what a B-tree entry can hold.
            let cut = { (word: String) in "left(\(word), \(Self.postgresIndexedWordLength))" }
            let qualified = prefix + name
            let function = prefix + quote(words.name + "#index")
            let words = "\(prefix)\(SQLFunctions.words)"
            let plain = "\(prefix)\(SQLFunctions.foldDiacritics)"
            return [
                "CREATE TABLE \(qualified) (\"word\" text COLLATE \"C\" NOT NULL, \"plain\" text COLLATE \"C\" NOT NULL, "
                    + "\"key\" \(keyType) NOT NULL, PRIMARY KEY (\"word\", \"key\"))",
                "INSERT INTO \(qualified) (\"word\", \"plain\", \"key\") SELECT DISTINCT \(cut("w")), "
                    + "\(cut("\(plain)(w)")), t.\(key) FROM \(prefix)\(base) AS t, \(words)(t.\(text)) AS w "
                    + "ON CONFLICT DO NOTHING",
                "CREATE INDEX \(quote(self.quoteless(name) + "#plain")) ON \(qualified) (\"plain\", \"key\")",
                "CREATE INDEX \(quote(self.quoteless(name) + "#key")) ON \(qualified) (\"key\")",
                // One function for the row trigger and the statement trigger of TRUNCATE (which
                // fires no row trigger). An insert drops the words the key had first: rows removed
                // without a delete trigger (TRUNCATE before this trigger existed) left none behind.
                "CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    + "IF TG_OP = 'TRUNCATE' THEN DELETE FROM \(qualified); RETURN NULL; END IF; "
                    + "IF TG_OP = 'INSERT' THEN DELETE FROM \(qualified) WHERE \"key\" = NEW.\(key); "
                    + "ELSE DELETE FROM \(qualified) WHERE \"key\" = OLD.\(key); END IF; "
                    + "IF TG_OP <> 'DELETE' THEN INSERT INTO \(qualified) (\"word\", \"plain\", \"key\") "
                    + "SELECT \(cut("w")), \(cut("\(plain)(w)")), NEW.\(key) FROM \(words)(NEW.\(text)) AS w "
                    + "ON CONFLICT DO NOTHING; END IF; "
                    + "RETURN NULL; END $$",
                "CREATE TRIGGER \(quote(self.quoteless(name) + "#index")) AFTER INSERT OR DELETE OR UPDATE OF \(text), "
                    + "\(key) ON \(prefix)\(base) FOR EACH ROW EXECUTE FUNCTION \(function)()",
                "CREATE TRIGGER \(quote(self.quoteless(name) + "#truncate")) AFTER TRUNCATE ON \(prefix)\(base) "
                    + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)()",
            ]
        }
    }

    /// The statements that drop the search index of `column` of `table`: triggers, function and
    /// word table.
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let words = TextSearch.wordTable(for: table, column: column).name
        let prefix = schema.map { quote($0) + "." } ?? ""
        switch dialect {
        case .sqlite:
            return ["insert", "update", "delete"].map { "DROP TRIGGER IF EXISTS \(quote(words + "#" + $0))" }
                + ["DROP TABLE IF EXISTS \(quote(words))"]
        case .postgres:
            return [
                "DROP TRIGGER IF EXISTS \(quote(words + "#index")) ON \(prefix)\(quote(table.name))",
                "DROP TRIGGER IF EXISTS \(quote(words + "#truncate")) ON \(prefix)\(quote(table.name))",
                "DROP FUNCTION IF EXISTS \(prefix)\(quote(words + "#index"))()",
                "DROP TABLE IF EXISTS \(prefix)\(quote(words))",
            ]
        }
    }

    /// The functions of search indexes in the current schema, each as `DROP FUNCTION` takes it
    /// (PostgreSQL; `nil` on SQLite, whose triggers go with their tables).
    ///
    /// ```sql
    /// SELECT p.oid::regprocedure::text FROM pg_proc AS p
    /// WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
    ///   AND p.proname LIKE '%#words#index'
    /// ```
    public var searchIndexFunctions: SQLStatement? {
        guard dialect == .postgres else { return nil }
        return SQLStatement(
            sql: "SELECT p.oid::regprocedure::text FROM pg_proc AS p WHERE p.pronamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND p.proname LIKE '%#words#index'")
    }

    private func quoteless(_ quoted: String) -> String {
        String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
    }

    /// `depot_words(text)` for PostgreSQL: the distinct words of the folded text, split at
    /// `TextSearch.separators` (one regular expression built from them).
    public static let postgresWordsFunction: String = {
        func escape(_ value: UInt32) -> String {
            value > 0xFFFF ? String(format: "\\U%08X", value) : String(format: "\\u%04X", value)
        }
        let ranges = TextSearch.separators.map { range in
            // PostgreSQL text holds no U+0000.
            let low = Swift.max(range.lowerBound, 1)
            return low == range.upperBound ? escape(low) : escape(low) + "-" + escape(range.upperBound)
        }.joined()
        return "CREATE OR REPLACE FUNCTION \(SQLFunctions.words)(t text) RETURNS SETOF text LANGUAGE sql IMMUTABLE "
            + "PARALLEL SAFE AS $$ SELECT DISTINCT w FROM regexp_split_to_table(\(postgresFold("t")), "
            + "'[\(ranges)]+') AS w WHERE w <> '' $$"
    }()
}

extension PredicateNode {
    /// The (table, column) pairs whose search index the predicate reads, subqueries included.
    package func searchedColumns(of table: TableDescription) -> [(table: TableDescription, column: String)] {
        switch self {
        case .matches(let column, _, _): return [(table, column)]
        case .and(let nodes), .or(let nodes): return nodes.flatMap { $0.searchedColumns(of: table) }
        case .not(let node): return node.searchedColumns(of: table)
        case .isInSubquery(_, let subquery): return subquery.predicate?.searchedColumns(of: subquery.table) ?? []
        default: return []
        }
    }
}

/// The check SQL stores run before a query that searches: the search index must exist.
package enum SearchIndexCheck {
    /// Throws unless every search index `predicate` and `ordering` read exists (`exists` answers
    /// for a word table).
    package static func require(
        _ predicate: PredicateNode?, ordering: [OrderTerm] = [], table: TableDescription,
        exists: (TableDescription) async throws -> Bool
    ) async throws {
        var searched = predicate?.searchedColumns(of: table) ?? []
        for term in ordering {
            if case .relevance(let column, _, _) = term { searched.append((table, column)) }
        }
        for (table, column) in searched {
            guard try await exists(TextSearch.wordTable(for: table, column: column)) else {
                throw DepotError(
                    .invalidQuery,
                    "searching \(table.entityName).\(column) (table '\(table.name)') needs its search index: add "
                        + "`.createSearchIndex(\(table.entityName).self, \\.\(column))` to a migration",
                    table: table.name, column: column)
            }
        }
    }
}
