import Depot

extension PostgresDialect {
    /// How many characters of a word PostgreSQL's search index holds: a `tsvector` word holds at
    /// most 2,047 bytes, and 200 characters are at most 800 bytes of UTF-8. Longer words are stored
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

    /// The GIN index `"<table>#<column>#words"` over `depot_search_vector(column)`
    /// (``searchVectorFunction``): PostgreSQL keeps it on every write, by any client, with any
    /// `search_path` (the index names its function by identity), through `TRUNCATE`, renames and
    /// `COPY`. The function is qualified with `schema` (stores always pass theirs). The index is
    /// marked with ``searchIndexVersion``: a Depot whose functions compute other words rebuilds it.
    public func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let (_, name, base, text) = searchIndexNames(table, column)
        let prefix = schema.map { quote($0) + "." } ?? ""
        return [
            "CREATE INDEX \(name) ON \(prefix)\(base) USING gin "
                + "(\(prefix)\(SQLFunctions.searchVector)(\(text)))",
            // Setup rebuilds an index whose mark differs from the functions it installs.
            "COMMENT ON INDEX \(prefix)\(name) IS '\(Self.searchIndexVersion)'",
        ]
    }

    /// The statements that drop the search index of `column` of `table` on PostgreSQL: the GIN
    /// index, or the word table of a Depot version before it with its triggers and function.
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        let words = TextSearch.wordTable(for: table, column: column).name
        let prefix = schema.map { quote($0) + "." } ?? ""
        let qualified = (prefix + quote(words)).replacingOccurrences(of: "'", with: "''")
        return [
            "DROP TRIGGER IF EXISTS \(quote(words + "#index")) ON \(prefix)\(quote(table.name))",
            "DROP TRIGGER IF EXISTS \(quote(words + "#truncate")) ON \(prefix)\(quote(table.name))",
            "DROP FUNCTION IF EXISTS \(prefix)\(quote(words + "#index"))()",
            // The name is an index now, a table before: DROP INDEX and DROP TABLE each fail on the other.
            "DO $$ DECLARE k \"char\"; BEGIN SELECT relkind INTO k FROM pg_class WHERE oid = "
                + "to_regclass('\(qualified)'); IF k = 'i' THEN EXECUTE 'DROP INDEX \(qualified)'; "
                + "ELSIF k = 'r' THEN EXECUTE 'DROP TABLE \(qualified)'; END IF; END $$",
        ]
    }

    /// ```sql
    /// SELECT p.oid::regprocedure::text FROM pg_proc AS p
    /// WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
    ///   AND p.proname LIKE '%#words#index'
    /// ```
    /// (the trigger functions of word tables of Depot versions before the GIN index).
    public var searchIndexFunctions: SQLStatement? {
        SQLStatement(
            sql: "SELECT p.oid::regprocedure::text FROM pg_proc AS p WHERE p.pronamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND p.proname LIKE '%#words#index'")
    }

    /// `depot_search_vector(column) @@ '"osl":* & "gard":*'::tsquery` (ignoring diacritics each
    /// term is `('sao':* | '\u{1}sao':*)`: the word as written, or its marked form without
    /// diacritics), which the GIN index answers; prefixes compare bytes. A token longer than what
    /// the index holds of a word also checks the row's own words.
    public func searchMatches(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        guard !tokens.isEmpty else { return "1 = 1" }
        let text = "\(quote(table.name)).\(quote(column))"
        func term(_ word: String) -> String {
            "'" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "':*"
        }
        let query = tokens.map { token in
            let indexed = indexedWord(token)
            guard matching == .caseAndDiacriticInsensitive else { return term(indexed) }
            return "(\(term(indexed)) | \(term("\u{1}" + indexed)))"
        }.joined(separator: " & ")
        var condition = "\(SQLFunctions.searchVector)(\(text)) @@ \(arguments.add(.text(query)))::tsquery"
        for token in tokens where indexedWord(token) != token {
            // A token longer than what the index holds of a word: the index finds the rows whose
            // words share what it holds, and the row's own words decide.
            let word = matching == .caseAndDiacriticInsensitive ? "\(SQLFunctions.foldDiacritics)(w)" : "w"
            let from = arguments.add(.text(token))
            let to = arguments.add(.text(token + "\u{10FFFF}"))
            condition +=
                " AND EXISTS (SELECT 1 FROM \(SQLFunctions.words)(\(text)) AS depot_x(w) "
                + "WHERE \(word) COLLATE \"C\" >= \(from) AND \(word) COLLATE \"C\" < \(to))"
        }
        return condition
    }

    /// The relevance order: how many of the row's words equal a token, most first, then the
    /// text's length, shortest (and NULL) first.
    public func searchRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        let byLength = ordering("length(\(quote(table.name)).\(quote(column)))", descending: false)
        // No query word: every row counts 0 whole words.
        guard !tokens.isEmpty else { return byLength }
        return "\(searchRelevanceCount(column, tokens, matching, table, &arguments)) DESC, \(byLength)"
    }

    /// How many of the row's words equal a token (`TextSearch.exactWords`). An ASCII row (most
    /// rows) is read with one regular expression per ASCII token (its words are ASCII, so no
    /// other token equals one); any other row by ``exactWordsFunction``, which folds the whole
    /// text (about 0.1 ms a row). When every token is ASCII, a row that is not is first matched
    /// against ``candidatePattern(_:_:)``, which every text holding such a word matches: most
    /// rows a prefix finds (`int` in "Aéroport International") skip the fold.
    package func searchRelevanceCount(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        let text = "\(quote(table.name)).\(quote(column))"
        // A folded ASCII word holds only a-z and 0-9: no character a pattern would read otherwise.
        let ascii = tokens.filter { token in token.utf8.allSatisfy { $0 < 0x80 } }
        let asciiCount =
            ascii.isEmpty
            ? "0"
            : ascii.map { "(\(text) ~* \(arguments.add(.text("(^|[^a-zA-Z0-9])\($0)([^a-zA-Z0-9]|$)"))))::int" }
                .joined(separator: " + ")
        let list = arguments.add(.text(tokens.joined(separator: "\u{1}")))
        let plain = matching == .caseAndDiacriticInsensitive ? "true" : "false"
        let exact = "\(SQLFunctions.exactWords)(\(text), \(list), \(plain))"
        let other =
            ascii.count == tokens.count
            ? "WHEN \(text) ~ \(arguments.add(.text(Self.candidatePattern(tokens, matching)))) THEN \(exact) ELSE 0"
            : "ELSE \(exact)"
        return "(CASE WHEN octet_length(\(text)) = char_length(\(text)) THEN \(asciiCount) \(other) END)"
    }

    /// A regular expression every text matches that holds a word equal to one of `tokens` (all
    /// ASCII) as `matching` compares words (and some texts that do not): a run of scalars between
    /// separators (or the text's ends), each of which folds to letters of the tokens, separators
    /// or nothing (the marks a diacritic-free form drops). A scalar that folds to a separator
    /// (U+0387 to U+00B7) also ends a run. NFC composes marks onto letters, never into ASCII, so
    /// reading scalar by scalar misses no such word (`relevanceCandidatesAgree` checks it).
    package static func candidatePattern(_ tokens: [String], _ matching: TextMatching) -> String {
        let alphabet = matching == .caseAndDiacriticInsensitive ? plainAlphabet : foldedAlphabet
        var wanted = ASCIIMask()
        var inWord = Set<UInt32>()
        for scalar in tokens.joined().unicodeScalars {
            inWord.insert(scalar.value)
            wanted.insert(scalar)
        }
        for letter in alphabet.letters where letter.image.isSubset(of: wanted) { inWord.insert(letter.scalar) }
        return "(^|\(alphabet.edge))[\(Self.ranges(inWord))]+(\(alphabet.edge)|$)"
    }

    /// A set of ASCII scalars, as bits.
    struct ASCIIMask: Sendable {
        var low: UInt64 = 0
        var high: UInt64 = 0

        mutating func insert(_ scalar: Unicode.Scalar) {
            guard scalar.isASCII else { return }
            if scalar.value < 64 { low |= 1 << scalar.value } else { high |= 1 << (scalar.value - 64) }
        }

        func isSubset(of other: ASCIIMask) -> Bool { low & ~other.low == 0 && high & ~other.high == 0 }
    }

    /// What ``candidatePattern(_:_:)`` reads of ``foldedForms`` for one way of comparing words:
    /// the scalars whose form holds only ASCII and separators, with the ASCII (not separators) it
    /// holds; and the bracket of scalars that end a run (separators, and scalars whose form holds
    /// one).
    struct CandidateAlphabet: Sendable {
        let letters: [(scalar: UInt32, image: ASCIIMask)]
        let edge: String

        init(_ image: (Unicode.Scalar, [Unicode.Scalar], [Unicode.Scalar]) -> [Unicode.Scalar]) {
            var letters: [(scalar: UInt32, image: ASCIIMask)] = []
            var edges = Set<UInt32>()
            for form in PostgresDialect.foldedForms {
                let scalars = image(form.scalar, form.folded, form.plain)
                if scalars.contains(where: TextSearch.isSeparator) { edges.insert(form.scalar.value) }
                let kept = scalars.filter { !TextSearch.isSeparator($0) }
                guard kept.allSatisfy(\.isASCII) else { continue }
                var mask = ASCIIMask()
                for scalar in kept { mask.insert(scalar) }
                letters.append((form.scalar.value, mask))
            }
            self.letters = letters
            edge = "[\(PostgresDialect.separatorRanges)\(PostgresDialect.ranges(edges))]"
        }
    }

    /// The alphabet of words compared folded (``TextMatching/caseInsensitive``).
    static let foldedAlphabet = CandidateAlphabet { _, folded, _ in folded }
    /// The alphabet of words compared folded, without diacritics.
    static let plainAlphabet = CandidateAlphabet { _, _, plain in plain }

    /// `values` as ranges of a regular expression's bracket.
    static func ranges(_ values: Set<UInt32>) -> String {
        func escape(_ value: UInt32) -> String { String(format: "\\u%04X", value) }
        var result = ""
        var sorted = values.sorted()[...]
        while let low = sorted.popFirst() {
            var high = low
            while sorted.first == high + 1 { high = sorted.removeFirst() }
            result += low == high ? escape(low) : escape(low) + "-" + escape(high)
        }
        return result
    }

    /// Each scalar of the Basic Multilingual Plane whose folded form could hold ASCII, a
    /// separator or nothing, with that form (`TextFolding.fold`) and its form without diacritics
    /// (`TextFolding.foldIgnoringDiacritics`): ASCII, what case folding or the diacritics table
    /// change, and the blocks holding the scalars NFC changes alone (U+212A KELVIN SIGN to `K`,
    /// U+037E to `;`). Scalars beyond it fold to scalars beyond ASCII.
    package static let foldedForms: [(scalar: Unicode.Scalar, folded: [Unicode.Scalar], plain: [Unicode.Scalar])] = {
        var candidates = Set<UInt32>(0x01...0x7F)
        for entry in TextFolding.caseFolding { candidates.insert(entry.scalar.value) }
        for (scalar, _) in TextFolding.diacritics.mapped { candidates.insert(scalar.value) }
        for mark in TextFolding.diacritics.removed { candidates.insert(mark.value) }
        for block in [0x0300...0x03FF, 0x1F00...0x1FFF, 0x2000...0x2FFF] as [ClosedRange<UInt32>] {
            candidates.formUnion(block)
        }
        return candidates.sorted().compactMap { value in
            guard value <= 0xFFFF, let scalar = Unicode.Scalar(value) else { return nil }
            let text = String(scalar)
            let folded = Array(TextFolding.fold(text).unicodeScalars)
            let plain = Array(TextFolding.foldIgnoringDiacritics(text).unicodeScalars)
            guard folded != [scalar] || plain != [scalar] else { return nil }
            return (scalar, folded, plain)
        }
    }()

    /// `CREATE INDEX` reads the rows there are.
    public func searchIndexFill(on table: TableDescription, column: String) -> SearchIndexFill? { nil }

    /// ```sql
    /// SELECT blocks_done::text, blocks_total::text FROM pg_stat_progress_create_index
    /// WHERE pid = $1::int AND phase LIKE 'building index%' AND blocks_total > 0
    /// ```
    /// (the table's blocks `CREATE INDEX` has read, while it reads them), for the backend
    /// `SELECT pg_backend_pid()` names.
    public func searchIndexBuildProgress(on table: TableDescription) -> SearchIndexBuildProgress? {
        SearchIndexBuildProgress(
            count: SQLStatement(sql: "SELECT count(*)::text FROM \(quote(table.name))"),
            backend: SQLStatement(sql: "SELECT pg_backend_pid()::text"),
            progress: { backend in
                SQLStatement(
                    sql: "SELECT blocks_done::text, blocks_total::text FROM pg_stat_progress_create_index "
                        + "WHERE pid = $1::int AND phase LIKE 'building index%' AND blocks_total > 0",
                    // Bound as the text it was read as: one that is no pid fails the poll.
                    arguments: [.text(backend)])
            })
    }

    /// PostgreSQL keeps the index itself: nothing to watch.
    public func searchReplacingIndexes(of table: String) -> SQLStatement? { nil }

    /// The GIN index, by its name in the connection's `search_path`.
    public func searchIndexProbe(for table: TableDescription, column: String) -> SearchIndexProbe {
        let words = TextSearch.wordTable(for: table, column: column)
        return .query(
            SQLStatement(
                sql: "SELECT count(*)::text FROM pg_class WHERE oid = to_regclass($1) AND relkind = 'i'",
                arguments: [.text(quote(words.name))]))
    }

    /// Search indexes (and word tables of earlier versions) in the current schema.
    public var searchIndexCatalog: SQLStatement { wordsRelations(kinds: "'r', 'i'") }

    /// The relations of the current schema named `…#words`, of the `kinds` given (`relkind`).
    private func wordsRelations(kinds: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT relname::text FROM pg_class WHERE relnamespace = (SELECT oid FROM pg_namespace WHERE "
                + "nspname = current_schema()) AND relkind IN (\(kinds)) AND relname LIKE '%#words' ORDER BY 1")
    }

    /// The index counts through the table.
    public func searchCount(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String? { nil }

    /// Any table with a one-column key can have a search index.
    public func searchIndexRefusal(on table: String) -> (query: SQLStatement, reason: String)? { nil }

    /// Word tables of Depot versions before the GIN index (each kept by row triggers).
    public var legacySearchIndexes: SQLStatement? { wordsRelations(kinds: "'r'") }

    /// PostgreSQL keeps the GIN index in the writing statement: no queue.
    public func searchQueue(table: String, column: String) -> SearchQueue? { nil }
}
