import Depot
import Foundation

/// How one SQL engine spells what Depot asks of it: types, placeholders, orders, text operators,
/// aggregates, transactions, search indexes and catalog queries.
///
/// ``SQLRenderer`` writes the statements every engine shares and asks its dialect for each piece
/// that differs; it never branches on the engine. Each engine's answers live in one place:
/// ``SQLiteDialect`` (`Dialects/SQLite`) and ``PostgresDialect`` (`Dialects/PostgreSQL`).
///
/// ```swift
/// let sqlite: any SQLDialect = .sqlite
/// sqlite.typeName(.decimal)            // "DECIMAL_TEXT"
/// sqlite.ordering("\"name\"", descending: false)     // "\"name\""
/// PostgresDialect().ordering("\"name\"", descending: false)  // "\"name\" ASC NULLS FIRST"
/// ```
public protocol SQLDialect: Sendable {
    // MARK: Identity

    /// The engine's one name: the key of its text in hand-written SQL (`MigrationOperation.sql`,
    /// `SQL(sqlite:postgres:)`): `sqlite`, `postgres`.
    var name: String { get }
    /// The engine's name in messages: `SQLite`, `PostgreSQL`.
    var displayName: String { get }
    /// The engine as OpenTelemetry's `db.system` names it (metrics and traces): `sqlite`,
    /// `postgresql`.
    var telemetrySystem: String { get }

    // MARK: Types and values

    /// The type name for a storage type, as casts spell it.
    func typeName(_ type: ColumnType) -> String
    /// The type a column of `type` is declared with in `CREATE TABLE` and `ADD COLUMN`: the type
    /// name, and on PostgreSQL `COLLATE "C"` for text, the byte order every Depot comparison uses,
    /// so that the column's indexes (its primary key's too) serve them.
    func columnTypeName(_ type: ColumnType) -> String
    /// How the engine's catalog spells a Depot type when asked about a stored column.
    func catalogTypeName(_ type: ColumnType) -> String
    /// An empty set of values of `type`, for the right side of `IN`: `x IN (…)` is false and
    /// `x NOT IN (…)` true for every row whose `x` is not NULL.
    func emptySet(of type: ColumnType) -> String
    /// Whether two values differ, NULL counting as a value: `a IS NOT b` (SQLite),
    /// `a IS DISTINCT FROM b` (PostgreSQL). An upsert updates only the rows it changes.
    func differs(_ left: String, _ right: String) -> String
    /// `flag` as a literal, for `DEFAULT` clauses (DDL takes no parameters).
    func literal(_ flag: Bool) -> String
    /// `number` as a literal, for `DEFAULT` clauses.
    func literal(_ number: Decimal) -> String
    /// `text` as a literal, for `DEFAULT` clauses.
    func literal(_ text: String) -> String

    // MARK: Parameters

    /// The placeholder of parameter `index` (1-based), bound in the order written: `?`, `$index`.
    func placeholder(_ index: Int) -> String
    /// A placeholder naming its parameter's position (1-based), usable more than once: `?index`,
    /// `$index`.
    func numberedPlaceholder(_ index: Int) -> String

    // MARK: Reads

    /// `column` (quoted) where it is compared or ordered: in the order every store shares (byte
    /// order for text, exact decimals by value). `type` is `nil` for a column the table lacks.
    func operand(_ column: String, type: ColumnType?) -> String
    /// `placeholder` where it is compared with a column of `type` (`nil`: not known).
    func comparisonValue(_ placeholder: String, type: ColumnType?) -> String
    /// `subject` in ascending or descending order, NULL first when ascending and last when
    /// descending (as every store orders it).
    func ordering(_ subject: String, descending: Bool) -> String
    /// Folded text `subject` in ascending or descending order, compared by bytes.
    func textOrdering(_ subject: String, descending: Bool) -> String
    /// `OFFSET` with no `LIMIT`, the offset's placeholder given.
    func offsetWithoutLimit(_ offset: String) -> String
    /// The clause that locks the rows a `SELECT` reads until the transaction ends (empty when
    /// the engine has one writer at a time and nothing to lock).
    func rowLock(_ lock: RowLock) -> String
    /// `operand IN` a long list of integers or texts bound as one parameter (engines cap the
    /// number of parameters); `nil` for values of another kind (they bind one by one).
    func inLargeList(_ operand: String, _ values: [StoredValue], _ arguments: inout ArgumentList) -> String?
    /// The condition that `subject` (text, already folded) contains, starts or ends with `pin`.
    func textCondition(
        _ subject: String, _ op: TextOperator, _ pin: String, _ arguments: inout ArgumentList
    ) -> String

    // MARK: Aggregates and updates

    /// A grouping column (quoted) of `type`.
    func groupOperand(_ column: String, type: ColumnType?) -> String
    /// The SQL computing `function` over `column` (quoted) of `type`, of the storage type
    /// `AggregateTerm.resultType(columnType:)` gives.
    func aggregate(_ function: AggregateFunction, _ column: String, type: ColumnType?) -> String
    /// An aggregate's `expression` (not a count) where it is compared or ordered.
    func comparableAggregate(_ expression: String, type: ColumnType?) -> String
    /// The value an `UPDATE … SET` assigns from `placeholder` to a column of `type`.
    func assigned(_ placeholder: String, type: ColumnType) -> String
    /// `source + addend`, failing on an integer overflow as every store does.
    func adding(_ source: String, _ addend: String) -> String

    // MARK: Transactions

    /// Begins a transaction that writes.
    var beginWrite: String { get }
    /// Begins a transaction that can only read; `nil` when the engine's readers refuse writes
    /// themselves.
    var beginReadOnly: String? { get }
    /// The statement that holds advisory lock `key` of the connection's current schema until the
    /// transaction ends; `nil` when a writing transaction holds the database's only write lock
    /// already.
    func advisoryLock(_ key: Int) -> String?
    /// The statements that suspend foreign keys for a table rebuild; `nil` when the engine
    /// rebuilds no table.
    var foreignKeySuspension: SQLRenderer.ForeignKeySuspension? { get }

    // MARK: Search

    /// What a search index holds of `word`.
    func indexedWord(_ word: String) -> String
    /// The statements that create the search index of `column` of `table` (see
    /// ``SQLRenderer/createSearchIndex(on:column:schema:)``).
    func createSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String]
    /// How the new search index of `column` of `table` is filled from the rows there are; `nil`
    /// when creating it fills it.
    func searchIndexFill(on table: TableDescription, column: String) -> SearchIndexFill?
    /// How another connection follows the build of a search index over `table` that creating it
    /// runs (one statement, so no batches to report); `nil` when the dialect fills it in batches
    /// (``searchIndexFill(on:column:)``) or cannot follow it.
    func searchIndexBuildProgress(on table: TableDescription) -> SearchIndexBuildProgress?
    /// The statements that drop the search index of `column` of `table`.
    func dropSearchIndex(on table: TableDescription, column: String, schema: String?) -> [String]
    /// The query listing the functions of search indexes in the current schema, as `DROP
    /// FUNCTION` takes them; `nil` when search indexes have no functions of their own.
    var searchIndexFunctions: SQLStatement? { get }
    /// The condition that `column` of `table` holds, for each token, a word it is a prefix of
    /// (`TextSearch.matches(_:tokens:_:)`), read from the column's search index.
    func searchMatches(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String
    /// The count of the rows of `table` whose `column` matches `tokens`, read from the search
    /// index alone; `nil` when the index cannot count them without the table.
    func searchCount(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String?
    /// The order terms of `TextSearch.exactWords(_:tokens:_:)` (most first), then the text's
    /// length (shortest and NULL first).
    func searchRelevance(
        _ column: String, _ tokens: [String], _ matching: TextMatching, _ table: TableDescription,
        _ arguments: inout ArgumentList
    ) -> String
    /// The query listing search indexes in a form an earlier Depot version made, to build again
    /// (each row: the index's word table); `nil` when there is none.
    var legacySearchIndexes: SQLStatement? { get }
    /// A query counting why `table` cannot have a search index on this engine, with what to say
    /// when it counts more than 0; `nil` when every table can.
    func searchIndexRefusal(on table: String) -> (query: SQLStatement, reason: String)?
    /// The query listing the unique indexes of `table` (every one, whatever made it) whose
    /// conflicts a search index's triggers must watch; `nil` when the engine needs none.
    func searchReplacingIndexes(of table: String) -> SQLStatement?
    /// What says that `column` of `table` has its search index.
    func searchIndexProbe(for table: TableDescription, column: String) -> SearchIndexProbe
    /// The query listing the names of the search indexes in the current schema (`<table>#<column>#words`
    /// among other names), legacy forms included.
    var searchIndexCatalog: SQLStatement { get }
    /// The queue of changes of the search index of `column` of `table`; `nil` when triggers keep
    /// the index current themselves.
    func searchQueue(table: String, column: String) -> SearchQueue?

    // MARK: Catalog

    /// See ``SQLRenderer/catalogColumns(of:)``.
    func catalogColumns(of table: String) -> SQLStatement
    /// See ``SQLRenderer/catalogTables``.
    var catalogTables: SQLStatement { get }
    /// See ``SQLRenderer/catalogIndexes(of:)``.
    func catalogIndexes(of table: String) -> SQLStatement
    /// See ``SQLRenderer/catalogIndexColumns(of:)``.
    func catalogIndexColumns(of index: String) -> SQLStatement
    /// See ``SQLRenderer/catalogTableExists(_:)``.
    func catalogTableExists(_ table: String) -> SQLStatement
    /// The query of the schema tables are created in; `nil` when the engine has no schemas.
    var currentSchema: SQLStatement? { get }

    // MARK: Migrations

    /// What `DROP TABLE` adds so that objects depending on the table go with it.
    var dropTableCascade: String { get }
    /// The statements that change `column` of `table` in place to its new type and nullability
    /// (`fromText`: the stored column holds text); `nil` when the engine cannot, and the table is
    /// rebuilt by its own procedure instead.
    func alterColumn(_ column: TableDescription.ColumnDescription, in table: String, fromText: Bool) -> [String]?
    /// The statement that drops the folded copy of `column` an earlier Depot kept
    /// (``SQLNames/legacyFoldedColumn(_:)``); `nil` when no Depot kept one on this engine.
    func dropLegacyFoldedCopy(of column: String, in table: String) -> String?
}

extension SQLDialect where Self == SQLiteDialect {
    /// SQLite: ``SQLiteDialect``.
    public static var sqlite: SQLiteDialect { SQLiteDialect() }
}

extension SQLDialect where Self == PostgresDialect {
    /// PostgreSQL: ``PostgresDialect``.
    public static var postgres: PostgresDialect { PostgresDialect() }
}

extension SQLDialect {
    /// No build to follow: the index is filled in batches, or not at all.
    public func searchIndexBuildProgress(on table: TableDescription) -> SearchIndexBuildProgress? { nil }

    /// The `WHERE` of an upsert's `DO UPDATE`: a stored row whose `columns` all hold the new
    /// values already is left alone, so it counts as no change (and its table as not written).
    public func unchangedRowsSkipped(in table: TableDescription, columns: [String]) -> String {
        " WHERE "
            + columns.map { differs("\(quote(table.name)).\(quote($0))", "excluded.\(quote($0))") }
            .joined(separator: " OR ")
    }

    /// The identifier in double quotes. Identifiers come from validated schemas; embedded quotes
    /// are doubled all the same.
    public func quote(_ identifier: String) -> String {
        // Every statement quotes each name it renders: a name without a quote (all of Depot's
        // own, and valid identifiers) skips Foundation's search and replace.
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// What a search index of `column` of `table` names, quoted: the index's own name (unquoted
    /// and quoted), the table, and the column.
    func searchIndexNames(_ table: TableDescription, _ column: String) -> (
        words: String, name: String, base: String, text: String
    ) {
        let words = TextSearch.wordTable(for: table, column: column).name
        return (words, quote(words), quote(table.name), quote(column))
    }

    /// The Depot type a catalog's declared type stands for, by its `ColumnType.rawValue` (the
    /// catalog's own spelling when none does). `url` reads as `text`: PostgreSQL stores both as text.
    public func depotTypeName(fromCatalog name: String) -> String {
        for type in ColumnType.allCases where catalogTypeName(type).caseInsensitiveCompare(name) == .orderedSame {
            return type == .url ? ColumnType.text.rawValue : type.rawValue
        }
        return name
    }
}

/// What tells a store that a search index exists.
public enum SearchIndexProbe: Sendable, Hashable {
    /// A table, present with this shape.
    case table(TableDescription)
    /// A query whose first column of its first row counts more than 0.
    case query(SQLStatement)
}

/// Names Depot gives to what it derives from a table.
public enum SQLNames {
    /// The name of the case-folded copy of text column `name` that PostgreSQL tables created by
    /// earlier versions of Depot hold. Depot no longer writes or reads these copies (the server folds,
    /// with ``SQLFunctions/fold``); tables are checked as if they were absent, and migrations that
    /// drop, rename or retype `name` drop its copy.
    public static func legacyFoldedColumn(_ name: String) -> String { name + "#folded" }
}
