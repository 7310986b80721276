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

    /// What the word table holds of `word` (see ``SQLDialect/indexedWord(_:)``).
    func indexedWord(_ word: String) -> String { dialect.indexedWord(word) }

    /// The relevance order: how many of the row's words equal a token, most first, then the
    /// text's length, shortest (and NULL) first.
    func renderRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        let words = TextSearch.wordTable(for: table, column: column)
        let field = matching == .caseAndDiacriticInsensitive ? "plain" : "word"
        let length = "length(\(quote(table.name)).\(quote(column)))"
        let byLength = dialect.ordering(length, descending: false)
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
        dialect.createSearchIndex(on: table, column: column, schema: schema)
    }

    /// The statements that drop the search index of `column` of `table`: triggers, function and
    /// word table.
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        dialect.dropSearchIndex(on: table, column: column, schema: schema)
    }

    /// The functions of search indexes in the current schema, each as `DROP FUNCTION` takes it
    /// (PostgreSQL; `nil` on SQLite, whose triggers go with their tables).
    public var searchIndexFunctions: SQLStatement? { dialect.searchIndexFunctions }
}
