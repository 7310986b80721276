import Depot
import Foundation

extension PostgresDialect {
    // MARK: - What Depot installs

    /// The statements that make a PostgreSQL database ready for Depot, run in one transaction:
    /// take the setup lock of `schema` (concurrent `CREATE OR REPLACE FUNCTION`s collide), create `schema`
    /// when one is configured, (re)define ``SQLFunctions/fold``, ``SQLFunctions/distance`` and
    /// ``SQLFunctions/announceCommit``, and mark each with ``setupVersion``; then rebuild every
    /// search index of the schema marked with another ``searchIndexVersion`` (its words were
    /// computed by functions that differ from these).
    ///
    /// A store runs them only when ``setupCheck`` finds a function missing or of another
    /// version, so reads on a database Depot has set up never write.
    public static func setup(schema: String?) -> [SQLStatement] {
        let dialect = PostgresDialect()
        // Keyed by the schema being set up, named here: it may not exist yet, so the current
        // schema could differ between two stores setting it up at once.
        let lock = "SELECT pg_advisory_xact_lock(\(SQLRenderer.setupLockKey), "
        var statements = [
            schema.map { SQLStatement(sql: lock + "hashtext($1))", arguments: [.text($0)]) }
                ?? SQLStatement(sql: lock + "hashtext(coalesce(current_schema(), '')))")
        ]
        if let schema {
            statements.append(SQLStatement(sql: "CREATE SCHEMA IF NOT EXISTS \(dialect.quote(schema))"))
        }
        statements += installedFunctions.map { SQLStatement(sql: $0.definition) }
        statements += installedFunctions.map {
            SQLStatement(sql: "COMMENT ON FUNCTION \($0.signature) IS '\(setupVersion)'")
        }
        statements.append(SQLStatement(sql: reindexOutdatedSearchIndexes))
        return statements
    }

    /// The mark a search index carries (its comment): a hash of the functions that compute what
    /// it holds (``searchVectorFunction``, ``searchVectorUnicodeFunction``).
    public static let searchIndexVersion = "depot search " + fnv(searchVectorUnicodeFunction + searchVectorFunction)

    /// Rebuilds (`REINDEX`) each search index of the current schema not marked with
    /// ``searchIndexVersion``, then marks it.
    static let reindexOutdatedSearchIndexes =
        "DO $$ DECLARE r record; BEGIN FOR r IN SELECT c.oid::regclass::text AS name FROM pg_class AS c "
        + "WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
        + "AND c.relkind = 'i' AND c.relname LIKE '%#words' "
        + "AND pg_get_indexdef(c.oid) LIKE '%\(SQLFunctions.searchVector)(%' "
        + "AND obj_description(c.oid, 'pg_class') IS DISTINCT FROM '\(searchIndexVersion)' LOOP "
        + "EXECUTE 'REINDEX INDEX ' || r.name; "
        + "EXECUTE format('COMMENT ON INDEX %s IS %L', r.name, '\(searchIndexVersion)'); END LOOP; END $$"

    /// FNV-1a, 64 bits, in hexadecimal.
    private static func fnv(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// Counts Depot's functions of this version (``setupVersion``) in the connection's
    /// current schema: ``setupFunctionCount`` when the database is ready.
    public static let setupCheck = SQLStatement(
        sql: "SELECT count(*) FROM pg_proc WHERE pronamespace = "
            + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
            + "AND proname IN (\(installedFunctions.map { "'\($0.name)'" }.joined(separator: ", "))) "
            + "AND obj_description(oid, 'pg_proc') = $1",
        arguments: [.text(setupVersion)])

    /// How many functions ``setupCheck`` counts in a ready database.
    public static var setupFunctionCount: Int { installedFunctions.count }

    /// The mark Depot's PostgreSQL functions carry (as their comment): a hash of their definitions,
    /// so a database set up by a Depot whose functions differ is set up again.
    public static let setupVersion = "depot " + fnv(installedFunctions.map(\.definition).joined(separator: "\n"))

    /// Each function Depot installs in PostgreSQL: its name, its signature (for `COMMENT ON`) and
    /// its definition.
    static let installedFunctions: [(name: String, signature: String, definition: String)] = [
        (SQLFunctions.fold, "\(SQLFunctions.fold)(text)", foldFunction),
        (SQLFunctions.foldDiacritics, "\(SQLFunctions.foldDiacritics)(text)", foldDiacriticsFunction),
        (SQLFunctions.words, "\(SQLFunctions.words)(text)", wordsFunction),
        // Before the vector: its SQL-standard body resolves the function it calls when created.
        (SQLFunctions.searchVectorUnicode, "\(SQLFunctions.searchVectorUnicode)(text)", searchVectorUnicodeFunction),
        (SQLFunctions.searchVector, "\(SQLFunctions.searchVector)(text)", searchVectorFunction),
        (SQLFunctions.exactWords, "\(SQLFunctions.exactWords)(text, text, boolean)", exactWordsFunction),
        (
            SQLFunctions.distance,
            "\(SQLFunctions.distance)(double precision, double precision, double precision, double precision)",
            distanceFunction
        ),
        (SQLFunctions.announceCommit, "\(SQLFunctions.announceCommit)()", announceFunction),
    ]

    /// `depot_fold(text)` for PostgreSQL: `TextFolding.fold(_:)` as one inlinable SQL expression.
    ///
    /// ASCII text is lowered A–Z only (`lower(t COLLATE "C")`); other text is composed
    /// (`normalize(t, NFC)`), its scalars that fold to several (status F: "ß" → "ss") replaced one
    /// by one, those that fold to one (status C) mapped by a single `translate`, and the result
    /// composed again, exactly as the Swift function does. Both come from
    /// `TextFolding.caseFolding`, and a test compares them over every Unicode scalar.
    public static var foldFunction: String {
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.fold)(t text) RETURNS text LANGUAGE sql IMMUTABLE "
            + "PARALLEL SAFE AS $$ SELECT \(foldExpression("t")) $$"
    }

    /// The folding of `depot_fold`, as an expression over `text`. Depot's functions inline it
    /// rather than call `depot_fold`: a function called from another resolves through the
    /// *caller's* `search_path`, and a client whose path does not hold Depot's schema (psql's
    /// default) could then not write a searchable table.
    static func foldExpression(_ text: String) -> String {
        "(CASE WHEN octet_length(\(text)) = char_length(\(text)) THEN lower(\(text) COLLATE \"C\") "
            + "ELSE normalize(\(foldTranslation.replacingOccurrences(of: "\u{1}", with: text)), NFC) END)"
    }

    /// The replacements and translation of case folding over a placeholder (U+0001) for the text.
    private static let foldTranslation: String = {
        let several = TextFolding.caseFolding.filter { $0.folded.unicodeScalars.count > 1 }
        let one = TextFolding.caseFolding.filter { $0.folded.unicodeScalars.count == 1 }
        // The table holds neither quotes nor backslashes; escape quotes all the same.
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        var expression = "normalize(\u{1}, NFC)"
        for entry in several {
            expression = "replace(\(expression), \(literal(String(entry.scalar))), \(literal(entry.folded)))"
        }
        var from = String.UnicodeScalarView()
        var to = String.UnicodeScalarView()
        for entry in one {
            from.append(entry.scalar)
            to.append(contentsOf: entry.folded.unicodeScalars)
        }
        return "translate(\(expression), \(literal(String(from))), \(literal(String(to))))"
    }()

    /// `depot_fold_diacritics(text)` for PostgreSQL: ``foldFunction``'s folding, then one
    /// `translate` mapping each letter with diacritics to its base letter and deleting combining
    /// marks, both from `TextFolding.diacritics`, as the Swift function does. ASCII text has
    /// neither: it is only lowercased (the `translate` over a ~1,200-character map cost 143 µs a
    /// row, about half of what a search index's trigger spent on an ASCII row).
    public static let foldDiacriticsFunction: String =
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.foldDiacritics)(t text) RETURNS text LANGUAGE sql "
        + "IMMUTABLE PARALLEL SAFE AS $$ SELECT CASE WHEN octet_length(t) = char_length(t) "
        + "THEN lower(t COLLATE \"C\") ELSE \(withoutDiacritics(foldExpression("t"))) END $$"

    /// `folded` (text folded by ``foldExpression(_:)``) with each letter with diacritics mapped to
    /// its base letter and combining marks deleted: one `translate` built from `TextFolding.diacritics`.
    static func withoutDiacritics(_ folded: String) -> String {
        "translate(\(folded), \(diacriticsTranslation))"
    }

    private static let diacriticsTranslation: String = {
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        var from = String.UnicodeScalarView()
        var to = String.UnicodeScalarView()
        for (scalar, base) in TextFolding.diacritics.mapped {
            from.append(scalar)
            to.append(base)
        }
        // translate deletes the characters of `from` that have none in `to`: the marks come last.
        for mark in TextFolding.diacritics.removed { from.append(mark) }
        return "\(literal(String(from))), \(literal(String(to)))"
    }()

    static var distanceFunction: String {
        let radians = "(pi() / 180.0::float8)"
        let half = { (difference: String) in "sin(((\(difference)) * \(radians)) / 2.0::float8)" }
        return "CREATE OR REPLACE FUNCTION \(SQLFunctions.distance)("
            + "lat1 double precision, lon1 double precision, lat2 double precision, lon2 double precision) "
            + "RETURNS double precision LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
            + "SELECT 2.0::float8 * 6371.0088::float8 * asin(sqrt(least(1.0::float8, "
            + "\(half("lat2 - lat1")) * \(half("lat2 - lat1")) "
            + "+ cos(lat1 * \(radians)) * cos(lat2 * \(radians)) "
            + "* \(half("lon2 - lon1")) * \(half("lon2 - lon1"))))) $$"
    }

    static var announceFunction: String {
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.announceCommit)() RETURNS trigger LANGUAGE plpgsql AS $$ "
            + "BEGIN PERFORM pg_notify('\(SQLFunctions.commitChannel)', TG_TABLE_SCHEMA || chr(31) "
            + "|| coalesce(current_setting('\(SQLFunctions.writerSetting)', true), '') || chr(31) "
            + "|| TG_TABLE_NAME); RETURN NULL; END $$"
    }

    /// Gives `table` the trigger that announces its commits, unless it has it already (a table
    /// created by an older Depot or by hand); safe against a concurrent store doing the same.
    public static func announceTrigger(for table: String) -> SQLStatement {
        let name = PostgresDialect().quote(table)
        let literal = name.replacingOccurrences(of: "'", with: "''")
        let channel = SQLFunctions.commitChannel
        return SQLStatement(
            sql: "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '\(literal)'::regclass "
                + "AND tgname = '\(channel)') THEN CREATE TRIGGER \(channel) AFTER INSERT OR UPDATE OR DELETE "
                + "OR TRUNCATE ON \(name) FOR EACH STATEMENT EXECUTE FUNCTION \(SQLFunctions.announceCommit)(); "
                + "END IF; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    }

    /// Names the transaction's writer as `identity`, so the announcements its writes cause are
    /// recognised (and skipped) by the store that made them.
    public static func markWriter(_ identity: String) -> SQLStatement {
        SQLStatement(sql: "SELECT set_config('\(SQLFunctions.writerSetting)', $1, true)", arguments: [.text(identity)])
    }

    /// Drops `schema` and everything in it.
    public static func dropSchema(_ schema: String) -> SQLStatement {
        SQLStatement(sql: "DROP SCHEMA IF EXISTS \(PostgresDialect().quote(schema)) CASCADE")
    }

    /// `depot_words(text)` for PostgreSQL: the distinct words of the folded text, split at
    /// `TextSearch.separators` (one regular expression built from them).
    public static let wordsFunction: String =
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.words)(t text) RETURNS SETOF text LANGUAGE sql IMMUTABLE "
        + "PARALLEL SAFE AS $$ SELECT DISTINCT w FROM regexp_split_to_table(\(foldExpression("t")), "
        + "'[\(separatorRanges)]+') AS w WHERE w <> '' $$"

    /// `TextSearch.separators` as the ranges of a regular expression's bracket (PostgreSQL text
    /// holds no U+0000, so the first range starts at U+0001).
    static let separatorRanges: String = {
        func escape(_ value: UInt32) -> String {
            value > 0xFFFF ? String(format: "\\U%08X", value) : String(format: "\\u%04X", value)
        }
        return TextSearch.separators.map { range in
            let low = Swift.max(range.lowerBound, 1)
            return low == range.upperBound ? escape(low) : escape(low) + "-" + escape(range.upperBound)
        }.joined()
    }()

    /// The words of folded text `text`, cut to ``indexedWordLength`` characters, as an array
    /// (with repeats; `array_to_tsvector` keeps each once).
    private static func indexedWords(_ text: String) -> String {
        let word = "[^\(separatorRanges)]"
        let cut =
            "(CASE WHEN char_length(\(text)) > \(indexedWordLength) THEN regexp_replace(\(text), "
            + "'(\(word){\(indexedWordLength)})\(word)+', '\\1', 'g') ELSE \(text) END)"
        return "array_remove(regexp_split_to_array(\(cut), '[\(separatorRanges)]+'), '')"
    }

    /// The most bytes of distinct words a `tsvector` holds (its offsets have 20 bits; beyond,
    /// `array_to_tsvector` builds a corrupt value without an error).
    public static let searchVectorCapacity = 1_048_575

    /// `depot_search_vector(text)`: what a search index (a GIN index over this expression)
    /// holds of a text: its words (``SQLFunctions/words``), each cut to ``indexedWordLength``
    /// characters, and for each word of non-ASCII text its form without diacritics marked by a
    /// leading U+0001 (a separator, so no word starts with it); NULL holds no word (an empty
    /// vector, so `NOT` of a search counts NULL texts). ASCII text up to 500,000 bytes is
    /// split by one inlined expression (3–4 µs a row); other text by
    /// ``searchVectorUnicodeFunction``. A SQL-standard body: PostgreSQL resolves the function it
    /// calls when it is created, so clients with any `search_path` write indexed tables.
    public static let searchVectorFunction: String =
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.searchVector)(t text) RETURNS tsvector LANGUAGE sql IMMUTABLE "
        + "PARALLEL SAFE RETURN CASE WHEN octet_length(t) = char_length(t) AND octet_length(t) <= 500000 THEN "
        + "array_to_tsvector(\(indexedWords("lower(t COLLATE \"C\")"))) ELSE "
        + "coalesce(\(SQLFunctions.searchVectorUnicode)(t), ''::tsvector) END"

    /// `depot_search_vector_unicode(text)`: ``searchVectorFunction`` for text that is not ASCII
    /// or is long, in PL/pgSQL so the text is folded once. Fails with SQLSTATE 54000 naming the
    /// size when the distinct words exceed ``searchVectorCapacity`` bytes. Calls only built-in
    /// functions (resolved through `pg_catalog` whatever the caller's `search_path`).
    public static let searchVectorUnicodeFunction: String =
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.searchVectorUnicode)(t text) RETURNS tsvector LANGUAGE plpgsql "
        + "IMMUTABLE STRICT PARALLEL SAFE AS $$ DECLARE f text := \(foldExpression("t")); p text := ''; "
        + "w text[] := \(indexedWords("f")); m text[] := '{}'; size bigint; BEGIN "
        + "IF octet_length(t) <> char_length(t) THEN p := \(withoutDiacritics("f")); "
        + "m := ARRAY(SELECT chr(1) || x FROM unnest(\(indexedWords("p"))) AS x); END IF; "
        + "w := w || m; "
        // What the words take is at most the folded texts and the marks; count exactly only then.
        + "IF octet_length(f) + octet_length(p) + cardinality(m) > \(searchVectorCapacity) THEN "
        + "SELECT sum(octet_length(x)) INTO size FROM (SELECT DISTINCT x FROM unnest(w) AS x) AS d; "
        + "IF size > \(searchVectorCapacity) THEN RAISE EXCEPTION USING ERRCODE = 'program_limit_exceeded', "
        + "MESSAGE = format('depot: a text of %s bytes is too large for a search index: its distinct words "
        + "take %s bytes, PostgreSQL''s tsvector holds at most \(searchVectorCapacity)', octet_length(t), size); "
        + "END IF; END IF; "
        + "RETURN array_to_tsvector(w); END $$"

    /// `depot_exact_words(text, tokens, plain)` for PostgreSQL: `TextSearch.exactWords(_:tokens:_:)`
    /// of a text that is not ASCII (a search's order reads ASCII rows with one regular expression
    /// per token), the tokens joined by U+0001, ignoring diacritics when `plain` is true.
    public static let exactWordsFunction: String =
        "CREATE OR REPLACE FUNCTION \(SQLFunctions.exactWords)(t text, tokens text, plain boolean) RETURNS integer "
        + "LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$ DECLARE n integer; BEGIN IF t IS NULL THEN RETURN 0; "
        + "END IF; SELECT count(*) INTO n FROM (SELECT DISTINCT w FROM unnest(regexp_split_to_array("
        + "\(foldExpression("t")), '[\(separatorRanges)]+')) AS w WHERE w <> '') AS d WHERE (CASE WHEN NOT plain "
        + "OR octet_length(w) = char_length(w) THEN w ELSE \(withoutDiacritics(foldExpression("w"))) END) "
        + "= ANY (string_to_array(tokens, chr(1))); RETURN n; END $$"
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
    /// for what ``SQLDialect/searchIndexProbe(for:column:)`` says); returns the searched
    /// columns, each with its table.
    @discardableResult
    package static func require(
        _ predicate: PredicateNode?, ordering: [OrderTerm] = [], table: TableDescription, dialect: any SQLDialect,
        exists: (SearchIndexProbe) async throws -> Bool
    ) async throws -> [(table: TableDescription, column: String)] {
        var searched = predicate?.searchedColumns(of: table) ?? []
        for term in ordering {
            if case .relevance(let column, _, _) = term { searched.append((table, column)) }
        }
        for (table, column) in searched {
            // The search index's definition of a table (`TextSearch.checkIndexable`).
            guard table.primaryKey.count == 1 else {
                throw DepotError(
                    .invalidQuery,
                    "searching \(table.entityName).\(column) (table '\(table.name)') needs a one-column primary "
                        + "key; it has \(table.primaryKey.count)",
                    table: table.name, column: column)
            }
            guard try await exists(dialect.searchIndexProbe(for: table, column: column)) else {
                throw DepotError(
                    .invalidQuery,
                    "searching \(table.entityName).\(column) (table '\(table.name)') needs its search index: add "
                        + "`.createSearchIndex(\(table.entityName).self, \\.\(column))` to a migration",
                    table: table.name, column: column)
            }
        }
        return searched.map { (table: $0.0, column: $0.1) }
    }
}
