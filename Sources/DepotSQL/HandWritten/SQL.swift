import Depot

/// A SQL statement written by hand, for what Depot does not model: every interpolated value is
/// bound as a parameter, never spliced into the text, and identifiers come from the schema (or
/// are checked) and are quoted.
///
/// ```swift
/// let code = "NO"
/// let rows = try await store.sql(
///     "SELECT \(column: \Airport.icao), \(column: \Airport.name) FROM \(table: Airport.self) "
///         + "WHERE \(column: \Airport.country) = \(code) ORDER BY 2", decoding: Named.self)
/// // SQLite:     SELECT "icao", "name" FROM "airports" WHERE "country" = ? ORDER BY 2   -- "NO" bound
/// // PostgreSQL: SELECT "icao", "name" FROM "airports" WHERE "country" = $1 ORDER BY 2
/// ```
///
/// Where the dialects differ, give each its text: ``init(sqlite:postgres:)``. SQL stores run
/// statements (``SQLRunning``); the in-memory store has no `sql` methods.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// One piece of a statement.
    public enum Segment: Sendable, Hashable {
        /// SQL text, as written.
        case text(String)
        /// A value, bound as a parameter.
        case value(StoredValue)
        /// A list of values for `IN (…)`, each bound, of the given column type. An empty list
        /// becomes an empty set of that type, so `x IN (…)` is false for every row and
        /// `x NOT IN (…)` true for every row, as SQL defines them for an empty set.
        case list([StoredValue], of: ColumnType)
        /// A table or column name, quoted; a name that is not a valid identifier fails the
        /// statement with `.invalidQuery`.
        case identifier(String)
    }

    /// The statement for every dialect, or per dialect name (`sqlite`, `postgres`).
    var variants: [String: [Segment]]
    /// The tables the statement reads, as its ``StringInterpolation/appendInterpolation(table:)``
    /// interpolations name them: what an observation of it watches.
    public private(set) var tables: Set<String>

    static let anyDialect = "*"

    /// The segments to run on the dialect named `dialect` (`sqlite`, `postgres`); `nil` when the
    /// statement has no text for it.
    public func segments(for dialect: String) -> [Segment]? {
        variants[dialect] ?? variants[Self.anyDialect]
    }

    /// A statement with text of its own for each dialect (interpolations work in both).
    ///
    /// ```swift
    /// let statement = SQL(
    ///     sqlite: "SELECT \(column: \Airport.icao) FROM \(table: Airport.self) WHERE instr(name, \(word)) > 0",
    ///     postgres: "SELECT \(column: \Airport.icao) FROM \(table: Airport.self) WHERE strpos(name, \(word)) > 0")
    /// ```
    public init(sqlite: SQL, postgres: SQL) {
        variants = [:]
        variants[SQLiteDialect().name] = sqlite.segments(for: SQLiteDialect().name)
        variants[PostgresDialect().name] = postgres.segments(for: PostgresDialect().name)
        tables = sqlite.tables.union(postgres.tables)
    }

    /// A statement of plain text, with nothing bound.
    public init(stringLiteral value: String) {
        variants = [Self.anyDialect: [.text(value)]]
        tables = []
    }

    /// A statement built by interpolation.
    public init(stringInterpolation: StringInterpolation) {
        variants = stringInterpolation.variants
        tables = stringInterpolation.tables
    }

    /// The statement followed by `rhs` (for one dialect-independent statement; a per-dialect
    /// statement appends `rhs` to each of its texts).
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.variants = [:]
        for dialect in Set(lhs.variants.keys).union(rhs.variants.keys) {
            // A dialect one side has no text for has none in the sum: never run half a statement.
            guard let left = lhs.segments(for: dialect), let right = rhs.segments(for: dialect) else { continue }
            result.variants[dialect] = left + right
        }
        result.tables.formUnion(rhs.tables)
        return result
    }

    /// Builds a statement from literal text and interpolated values, tables and columns.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        /// The segments every dialect shares, up to the first spliced per-dialect statement.
        var segments: [Segment] = []
        /// Once a per-dialect statement is spliced in, each dialect's own segments from there on
        /// (what is appended later goes to every one of them).
        var forks: [String: [Segment]] = [:]
        var tables: Set<String> = []

        /// Appends `segment` to every dialect's text.
        mutating func append(_ segment: Segment) {
            if forks.isEmpty {
                segments.append(segment)
            } else {
                for dialect in forks.keys { forks[dialect]?.append(segment) }
            }
        }

        /// The statement's text per dialect: one text for every dialect, or one per dialect once
        /// a per-dialect statement was spliced in.
        var variants: [String: [Segment]] {
            if !forks.isEmpty { return forks.mapValues { segments + $0 } }
            // Every dialect lacked text in a spliced statement: the statement runs nowhere.
            return missing.isEmpty ? [SQL.anyDialect: segments] : [:]
        }

        /// Room for `literalCapacity` characters and `interpolationCount` interpolations.
        public init(literalCapacity: Int, interpolationCount: Int) {
            segments.reserveCapacity(interpolationCount * 2 + 1)
        }

        /// SQL text, as written.
        public mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { append(.text(literal)) }
        }

        /// A value, bound as a parameter (`nil` binds NULL).
        public mutating func appendInterpolation<Value: StorableValue>(_ value: Value) {
            append(.value(value.storedValue))
        }

        /// Values for `IN (…)`, each bound: `WHERE "country" IN \(list: codes)`.
        public mutating func appendInterpolation<Value: StorableValue>(list values: some Sequence<Value>) {
            append(.list(values.map(\.storedValue), of: Value.columnType))
        }

        /// An entity's table name, quoted; the table is one the statement reads (see ``SQL/tables``).
        public mutating func appendInterpolation<Root: Entity>(table entity: Root.Type) {
            let name = Root.schema.table.name
            tables.insert(name)
            append(.identifier(name))
        }

        /// A column's name, quoted (`\(column: \Airport.name)` gives `"name"`).
        public mutating func appendInterpolation<Root: Entity, Value>(column keyPath: KeyPath<Root, Value>) {
            append(.identifier(Root.schema.referenceName(keyPath)))
        }

        /// A name of your own (an alias, a table Depot does not manage), quoted; it must be a
        /// valid identifier (letters, digits, `_`, not starting with a digit), else the
        /// statement fails with `.invalidQuery`.
        public mutating func appendInterpolation(identifier name: String) {
            append(.identifier(name))
        }

        /// Another statement, spliced with its bound values and tables. A per-dialect statement
        /// (``SQL/init(sqlite:postgres:)``) splices each dialect's text into that dialect's text
        /// of this one:
        ///
        /// ```swift
        /// let clause = SQL(sqlite: "WHERE instr(name, \(word)) > 0", postgres: "WHERE strpos(name, \(word)) > 0")
        /// try await tx.sql("DELETE FROM \(table: Airport.self) \(clause)")
        /// // SQLite:     DELETE FROM "airports" WHERE instr(name, ?) > 0
        /// // PostgreSQL: DELETE FROM "airports" WHERE strpos(name, $1) > 0
        /// ```
        public mutating func appendInterpolation(_ fragment: SQL) {
            tables.formUnion(fragment.tables)
            if let shared = fragment.variants[SQL.anyDialect], fragment.variants.count == 1 {
                for segment in shared { append(segment) }
                return
            }
            if forks.isEmpty && missing.isEmpty {
                for dialect in fragment.variants.keys where dialect != SQL.anyDialect { forks[dialect] = [] }
            }
            for dialect in Array(forks.keys) {
                // A dialect the fragment has no text for makes the whole statement have none:
                // it fails with `.invalidQuery` when run there, rather than running without it.
                guard var own = forks[dialect], let spliced = fragment.segments(for: dialect) else {
                    forks[dialect] = nil
                    missing.insert(dialect)
                    continue
                }
                own += spliced
                forks[dialect] = own
            }
        }

        /// Dialects a spliced statement had no text for: the statement has none for them either.
        var missing: Set<String> = []
    }
}

/// The rows a hand-written statement returned: column names, and each value as the engine gave
/// it (integers, doubles, text, bytes; PostgreSQL's own types — `numeric`, `uuid`, `timestamptz`
/// — as the matching `StoredValue`).
public struct SQLRows: Sendable, Equatable {
    /// The result's column names, in order.
    public var columns: [String]
    /// The rows, each with one value per column.
    public var rows: [[StoredValue]]

    /// Rows with these column names.
    public init(columns: [String], rows: [[StoredValue]]) {
        self.columns = columns
        self.rows = rows
    }
}
