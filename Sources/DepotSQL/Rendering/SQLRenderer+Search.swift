import Depot

extension SQLFunctions {
    /// `depot_words(text)`: the distinct words of a text (`TextSearch.words(of:)`): a JSON array
    /// on SQLite (read with `json_each`), a set of rows on PostgreSQL.
    public static let words = "depot_words"
    /// `depot_exact_words(text, tokens)`: `TextSearch.exactWords(_:tokens:_:)` of the text, the
    /// tokens joined by U+0001; ignoring diacritics on SQLite, as its third argument says on
    /// PostgreSQL (``PostgresDialect/exactWordsFunction``).
    public static let exactWords = "depot_exact_words"
    /// `depot_search_vector(text)` (PostgreSQL): the `tsvector` a search index holds of a text
    /// (``PostgresDialect/searchVectorFunction``).
    public static let searchVector = "depot_search_vector"
    /// `depot_search_vector_unicode(text)` (PostgreSQL): ``searchVector`` of text that is not ASCII
    /// or is long (``PostgresDialect/searchVectorUnicodeFunction``).
    public static let searchVectorUnicode = "depot_search_vector_unicode"
    /// `depot_search_ready(pending, query)` (SQLite): `query`, or on a reader connection an error
    /// (``searchQueuePending``) when `pending` is not 0: a reader cannot fold a search queue, so
    /// its statement stops before reading a stale index, and the store folds and reads again.
    public static let searchReady = "depot_search_ready"
    /// The message of ``searchReady``'s error.
    public static let searchQueuePending = "depot: a search index queue holds changes"
}

/// How a new search index is filled from the rows there are, in batches in `rowid` order, so a
/// migration can report `MigrationProgress.rows` (SQLite; PostgreSQL's `CREATE INDEX` fills
/// its index itself).
public struct SearchIndexFill: Sendable {
    /// Counts the rows to index.
    public var count: SQLStatement
    /// For the rows after position `after`, at most `limit`: one row holding the last one's
    /// position (NULL when there is none) and how many there are.
    public var next: @Sendable (_ after: Int64, _ limit: Int) -> SQLStatement
    /// Indexes the rows ``next`` describes.
    public var fill: @Sendable (_ after: Int64, _ limit: Int) -> SQLStatement

    /// A fill with its statements.
    public init(
        count: SQLStatement, next: @escaping @Sendable (Int64, Int) -> SQLStatement,
        fill: @escaping @Sendable (Int64, Int) -> SQLStatement
    ) {
        self.count = count
        self.next = next
        self.fill = fill
    }
}

/// How another connection follows a search index's build while the one statement that creates
/// it runs (PostgreSQL's `CREATE INDEX`, through `pg_stat_progress_create_index`).
public struct SearchIndexBuildProgress: Sendable {
    /// Counts the rows to index.
    public var count: SQLStatement
    /// The building connection's identity, as ``progress`` takes it (one row, one column).
    public var backend: SQLStatement
    /// For the building connection `backend`, at most one row: the blocks of the table the build
    /// has read, and how many there are; none before the build reads the table.
    public var progress: @Sendable (_ backend: String) -> SQLStatement

    /// A build's progress with its statements.
    public init(
        count: SQLStatement, backend: SQLStatement, progress: @escaping @Sendable (_ backend: String) -> SQLStatement
    ) {
        self.count = count
        self.backend = backend
        self.progress = progress
    }
}

/// A search index's queue of changes (SQLite): whether it holds any, and the statements that fold
/// them into the index. Stores fold it before a commit of the table's writes and before a search
/// in a transaction; a reader's search checks in its own statement that the queue is empty
/// (``SQLFunctions/searchReady``).
public struct SearchQueue: Sendable {
    /// Counts 1 when the queue holds changes, 0 when not.
    public var pending: SQLStatement
    /// Folds the queued changes into the index and empties the queue.
    public var fold: [SQLStatement]

    /// A queue with its check and fold statements.
    public init(pending: SQLStatement, fold: [SQLStatement]) {
        self.pending = pending
        self.fold = fold
    }
}

extension SQLRenderer {
    // MARK: - Search

    /// The condition that `column` of `table` holds, for each token, a word starting with it,
    /// read from the column's search index (``SQLDialect/searchMatches(_:_:_:_:_:)``).
    func renderMatches(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        dialect.searchMatches(column, tokens, matching, table, &arguments)
    }

    /// The relevance order (``SQLDialect/searchRelevance(_:_:_:_:_:)``): how many of the row's
    /// words equal a token, most first, then the text's length, shortest (and NULL) first.
    func renderRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String {
        dialect.searchRelevance(column, tokens, matching, table, &arguments)
    }

    /// The statements that create the search index of `column` of `table` in `schema` (the
    /// connection's current schema on PostgreSQL, `nil` on SQLite): SQLite's FTS5 table, filled
    /// from the rows there are, its queue and the triggers that fill it; PostgreSQL's GIN index.
    public func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        dialect.createSearchIndex(on: table, column: column, schema: schema)
    }

    /// The statements that drop the search index of `column` of `table`, with its triggers and
    /// queue (or an earlier version's word table, triggers and function).
    public func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String] {
        dialect.dropSearchIndex(on: table, column: column, schema: schema)
    }

    /// The functions of search indexes in the current schema, each as `DROP FUNCTION` takes it
    /// (PostgreSQL; `nil` on SQLite, whose triggers go with their tables).
    public var searchIndexFunctions: SQLStatement? { dialect.searchIndexFunctions }
}
