/// The one definition of word search, shared by every store: how text splits into words, which
/// words a query asks for, and the relevance that orders matches.
///
/// A text's words are the runs of characters between separators in its folded form
/// (``TextFolding/fold(_:)``), each kept once. Separators are ``separators``: ASCII space,
/// control characters and punctuation (every ASCII character but letters and digits), the
/// no-break space, `¡ « · » ¿`, the General Punctuation block (U+2000–U+206F: spaces, dashes,
/// quotes, bullets), `、。` and the ideographic space, and the noncharacter U+10FFFF. A query
/// matches a text when each of its words is a prefix of some word of the text: "osl gard"
/// matches "Oslo Airport, Gardermoen". Ignoring diacritics compares
/// ``TextFolding/foldIgnoringDiacritics(_:)`` of both sides' words instead.
///
/// ```swift
/// TextSearch.words(of: "Oslo Airport, Gardermoen")  // ["oslo", "airport", "gardermoen"]
/// TextSearch.tokens(of: "São", .caseAndDiacriticInsensitive)  // ["sao"]
/// ```
public enum TextSearch {
    /// The separator ranges, in scalar order: what splits words on every store (PostgreSQL's
    /// `depot_words` is generated from it).
    public static let separators: [ClosedRange<UInt32>] = [
        0x00...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7F, 0xA0...0xA1, 0xAB...0xAB, 0xB7...0xB7, 0xBB...0xBB,
        0xBF...0xBF, 0x2000...0x206F, 0x3000...0x3002, 0x10FFFF...0x10FFFF,
    ]

    /// Whether `scalar` separates words.
    public static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 {
            return !((0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value))
        }
        return separators.contains { $0.contains(value) }
    }

    /// The distinct words of `text`'s folded form, in order of first appearance.
    public static func words(of text: String) -> [String] {
        split(TextFolding.fold(text))
    }

    /// The words a query asks for: its distinct words, folded as `matching` says (without
    /// diacritics for ``TextMatching/caseAndDiacriticInsensitive``; search always ignores case).
    public static func tokens(of query: String, _ matching: TextMatching) -> [String] {
        let words = words(of: query)
        guard matching == .caseAndDiacriticInsensitive else { return words }
        var seen: Set<String> = []
        return words.map(TextFolding.foldIgnoringDiacritics).filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// Whether `text` holds, for each token, a word it is a prefix of (bytewise); a NULL text
    /// (`nil`) matches nothing, and no tokens match every text.
    public static func matches(_ text: String?, tokens: [String], _ matching: TextMatching) -> Bool {
        guard !tokens.isEmpty else { return true }
        guard let text else { return false }
        let words = comparable(words(of: text), matching)
        return tokens.allSatisfy { token in words.contains { TextFolding.hasPrefixBytes($0, token) } }
    }

    /// The relevance of `text` to `tokens`: how many of its words equal a token (compared as
    /// `matching` folds them). Orders put more such words first, then shorter texts (in
    /// Unicode scalars), then the primary key.
    public static func exactWords(_ text: String?, tokens: [String], _ matching: TextMatching) -> Int {
        guard let text else { return 0 }
        let wanted = Set(tokens)
        return comparable(words(of: text), matching).filter { wanted.contains($0) }.count
    }

    /// The words as `matching` compares them (each word's diacritic-free form is kept for every
    /// word, so two words may compare alike).
    static func comparable(_ words: [String], _ matching: TextMatching) -> [String] {
        matching == .caseAndDiacriticInsensitive ? words.map(TextFolding.foldIgnoringDiacritics) : words
    }

    static func split(_ folded: String) -> [String] {
        var words: [String] = []
        var seen: Set<String> = []
        var current = String.UnicodeScalarView()
        func flush() {
            guard !current.isEmpty else { return }
            let word = String(current)
            if seen.insert(word).inserted { words.append(word) }
            current = String.UnicodeScalarView()
        }
        for scalar in folded.unicodeScalars {
            if isSeparator(scalar) { flush() } else { current.append(scalar) }
        }
        flush()
        return words
    }

    /// The name (`<table>#<column>#words`) of the search index of `column` of `table`
    /// (``MigrationOperation/createSearchIndex(_:_:)``: SQLite's FTS5 table, PostgreSQL's GIN
    /// index), as the word table earlier Depot versions kept: the word (folded), its form without
    /// diacritics, and the row's primary key.
    public static func wordTable(for table: TableDescription, column: String) -> TableDescription {
        let key = table.primaryKey.first.flatMap { name in table.columns.first { $0.name == name } }
        return TableDescription(
            name: "\(table.name)#\(column)#words", entityName: "\(table.entityName) words of \(column)",
            columns: [
                .init(name: "word", type: .text, isNullable: false),
                .init(name: "plain", type: .text, isNullable: false),
                .init(name: "key", type: key?.type ?? .text, isNullable: false),
            ], primaryKey: ["word", "key"])
    }
}

extension TextSearch {
    /// Throws unless `column` of `table` can have a search index: a text column of a table with a
    /// one-column primary key.
    public static func checkIndexable(_ table: TableDescription, column: String) throws {
        guard let found = table.columns.first(where: { $0.name == column }) else {
            throw DepotError(
                .migration, "no column '\(column)' in '\(table.name)' to index for search", table: table.name)
        }
        guard [.text, .url].contains(found.type) else {
            throw DepotError(
                .migration,
                "a search index needs a text column; '\(column)' of '\(table.name)' holds \(found.type.rawValue)",
                table: table.name, column: column)
        }
        guard table.primaryKey.count == 1 else {
            throw DepotError(
                .migration,
                "a search index needs a one-column primary key; '\(table.name)' has \(table.primaryKey.count)",
                table: table.name)
        }
    }
}
