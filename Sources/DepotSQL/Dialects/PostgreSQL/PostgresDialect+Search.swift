import Depot

extension PostgresDialect {
    /// How many characters of a word PostgreSQL's word tables hold: a B-tree entry holds at most
    /// about 2.7 KB, and 200 characters are at most 800 bytes of UTF-8. Longer words are stored
    /// cut there; a longer query word finds its rows through what the index holds, then a check of
    /// the row's own words.
    public static let indexedWordLength = 200

    /// `word`, cut to ``indexedWordLength`` characters.
    public func indexedWord(_ word: String) -> String {
        guard word.unicodeScalars.count > Self.indexedWordLength else { return word }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: word.unicodeScalars.prefix(Self.indexedWordLength))
        return String(cut)
    }

    /// The word table in `schema` (words cut to what a B-tree entry holds), the words of the
    /// rows there are, its indexes, one trigger function and the row and `TRUNCATE` triggers
    /// that call it. Every name is qualified with `schema`, so writers with any `search_path`
    /// keep the index. Stores always pass their schema (the migrator refuses, naming it, a
    /// connection with no current schema); `nil` renders unqualified names, which resolve through
    /// each writer's own `search_path`.
    public func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let (words, name, base, key, text, keyType) = searchIndexNames(table, column)
        let prefix = schema.map { quote($0) + "." } ?? ""
        let cut = { (word: String) in "left(\(word), \(Self.indexedWordLength))" }
        let qualified = prefix + name
        let function = prefix + quote(words.name + "#index")
        let split = "\(prefix)\(SQLFunctions.words)"
        let plain = "\(prefix)\(SQLFunctions.foldDiacritics)"
        return [
            "CREATE TABLE \(qualified) (\"word\" text COLLATE \"C\" NOT NULL, \"plain\" text COLLATE \"C\" NOT NULL, "
                + "\"key\" \(keyType) NOT NULL, PRIMARY KEY (\"word\", \"key\"))",
            "INSERT INTO \(qualified) (\"word\", \"plain\", \"key\") SELECT DISTINCT \(cut("w")), "
                + "\(cut("\(plain)(w)")), t.\(key) FROM \(prefix)\(base) AS t, \(split)(t.\(text)) AS w "
                + "ON CONFLICT DO NOTHING",
            "CREATE INDEX \(quote(words.name + "#plain")) ON \(qualified) (\"plain\", \"key\")",
            "CREATE INDEX \(quote(words.name + "#key")) ON \(qualified) (\"key\")",
            // One function for the row trigger and the statement trigger of TRUNCATE (which
            // fires no row trigger). An insert drops the words the key had first: rows removed
            // without a delete trigger (TRUNCATE before this trigger existed) left none behind.
            "CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "IF TG_OP = 'TRUNCATE' THEN DELETE FROM \(qualified); RETURN NULL; END IF; "
                + "IF TG_OP = 'INSERT' THEN DELETE FROM \(qualified) WHERE \"key\" = NEW.\(key); "
                + "ELSE DELETE FROM \(qualified) WHERE \"key\" = OLD.\(key); END IF; "
                + "IF TG_OP <> 'DELETE' THEN INSERT INTO \(qualified) (\"word\", \"plain\", \"key\") "
                + "SELECT \(cut("w")), \(cut("\(plain)(w)")), NEW.\(key) FROM \(split)(NEW.\(text)) AS w "
                + "ON CONFLICT DO NOTHING; END IF; "
                + "RETURN NULL; END $$",
            "CREATE TRIGGER \(quote(words.name + "#index")) AFTER INSERT OR DELETE OR UPDATE OF \(text), "
                + "\(key) ON \(prefix)\(base) FOR EACH ROW EXECUTE FUNCTION \(function)()",
            "CREATE TRIGGER \(quote(words.name + "#truncate")) AFTER TRUNCATE ON \(prefix)\(base) "
                + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)()",
        ]
    }

    /// The statements that drop the search index of `column` of `table` on PostgreSQL: triggers, functions, word table.
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let words = TextSearch.wordTable(for: table, column: column).name
        let prefix = schema.map { quote($0) + "." } ?? ""
        return [
            "DROP TRIGGER IF EXISTS \(quote(words + "#index")) ON \(prefix)\(quote(table.name))",
            "DROP TRIGGER IF EXISTS \(quote(words + "#truncate")) ON \(prefix)\(quote(table.name))",
            "DROP FUNCTION IF EXISTS \(prefix)\(quote(words + "#index"))()",
            "DROP TABLE IF EXISTS \(prefix)\(quote(words))",
        ]
    }

    /// ```sql
    /// SELECT p.oid::regprocedure::text FROM pg_proc AS p
    /// WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
    ///   AND p.proname LIKE '%#words#index'
    /// ```
    public var searchIndexFunctions: SQLStatement? {
        SQLStatement(
            sql: "SELECT p.oid::regprocedure::text FROM pg_proc AS p WHERE p.pronamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND p.proname LIKE '%#words#index'")
    }

    /// `"key" IN (SELECT "key" FROM <words> WHERE "word" >= ? AND "word" < ?)` for each token:
    /// a range over the word table's primary key (words in byte order; no word holds U+10FFFF,
    /// so every word starting with the token sorts below the token followed by it).
    public func searchMatches(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        guard !tokens.isEmpty else { return "1 = 1" }
        let words = TextSearch.wordTable(for: table, column: column)
        let key = searchKey(of: table)
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

    /// The relevance order: how many of the row's words equal a token, most first, then the
    /// text's length, shortest (and NULL) first.
    public func searchRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        let words = TextSearch.wordTable(for: table, column: column)
        let field = matching == .caseAndDiacriticInsensitive ? "plain" : "word"
        let length = "length(\(quote(table.name)).\(quote(column)))"
        let byLength = ordering(length, descending: false)
        // No query word: every row counts 0 whole words (and a bare 0 would name a column to SQLite).
        guard !tokens.isEmpty else { return byLength }
        let list = tokens.map { arguments.add(.text(indexedWord($0))) }.joined(separator: ", ")
        let exact =
            "(SELECT count(*) FROM \(quote(words.name)) AS depot_w WHERE depot_w.\"key\" = "
            + "\(quote(table.name)).\(searchKey(of: table)) AND depot_w.\(quote(field)) IN (\(list)))"
        return "\(exact) DESC, \(byLength)"
    }

    /// The word table: a search checks that it is there, with its shape.
    public func searchIndexTable(for table: TableDescription, column: String) -> TableDescription {
        TextSearch.wordTable(for: table, column: column)
    }

    /// A word table holds a row per word: counting rows takes the table.
    public func searchCount(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String? { nil }

    /// Any table with a one-column key can have a word table.
    public func searchIndexRefusal(on table: String) -> (query: SQLStatement, reason: String)? { nil }

    /// PostgreSQL's word tables are the current form.
    public var legacySearchIndexes: SQLStatement? { nil }

    /// Row triggers keep the word table current: no queue.
    public func searchQueue(table: String, column: String) -> SearchQueue? { nil }
}
