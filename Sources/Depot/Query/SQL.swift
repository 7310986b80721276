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
/// Where the dialects differ, give each its text: ``init(sqlite:postgres:)``. The in-memory store
/// runs no SQL and refuses every statement with `.invalidQuery`.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// One piece of a statement.
    public enum Segment: Sendable, Hashable {
        /// SQL text, as written.
        case text(String)
        /// A value, bound as a parameter.
        case value(StoredValue)
        /// A list of values for `IN (…)`, each bound; an empty list becomes `(NULL)`, which
        /// matches nothing.
        case list([StoredValue])
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
        variants = [
            "sqlite": sqlite.segments(for: "sqlite") ?? [], "postgres": postgres.segments(for: "postgres") ?? [],
        ]
        tables = sqlite.tables.union(postgres.tables)
    }

    /// A statement of plain text, with nothing bound.
    public init(stringLiteral value: String) {
        variants = [Self.anyDialect: [.text(value)]]
        tables = []
    }

    /// A statement built by interpolation.
    public init(stringInterpolation: StringInterpolation) {
        variants = [Self.anyDialect: stringInterpolation.segments]
        tables = stringInterpolation.tables
    }

    /// The statement followed by `rhs` (for one dialect-independent statement; a per-dialect
    /// statement appends `rhs` to each of its texts).
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        for dialect in Set(lhs.variants.keys).union(rhs.variants.keys) {
            let name = dialect == anyDialect ? anyDialect : dialect
            result.variants[dialect] =
                (lhs.segments(for: name) ?? []) + (rhs.segments(for: name) ?? [])
        }
        result.tables.formUnion(rhs.tables)
        return result
    }

    /// Builds a statement from literal text and interpolated values, tables and columns.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var segments: [Segment] = []
        var tables: Set<String> = []

        /// Room for `literalCapacity` characters and `interpolationCount` interpolations.
        public init(literalCapacity: Int, interpolationCount: Int) {
            segments.reserveCapacity(interpolationCount * 2 + 1)
        }

        /// SQL text, as written.
        public mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { segments.append(.text(literal)) }
        }

        /// A value, bound as a parameter (`nil` binds NULL).
        public mutating func appendInterpolation<Value: StorableValue>(_ value: Value) {
            segments.append(.value(value.storedValue))
        }

        /// Values for `IN (…)`, each bound: `WHERE "country" IN \(list: codes)`.
        public mutating func appendInterpolation<Value: StorableValue>(list values: some Sequence<Value>) {
            segments.append(.list(values.map(\.storedValue)))
        }

        /// An entity's table name, quoted; the table is one the statement reads (see ``SQL/tables``).
        public mutating func appendInterpolation<Root: Entity>(table entity: Root.Type) {
            let name = Root.schema.table.name
            tables.insert(name)
            segments.append(.identifier(name))
        }

        /// A column's name, quoted (`\(column: \Airport.name)` gives `"name"`).
        public mutating func appendInterpolation<Root: Entity, Value>(column keyPath: KeyPath<Root, Value>) {
            segments.append(.identifier(Root.schema.referenceName(keyPath)))
        }

        /// A name of your own (an alias, a table Depot does not manage), quoted; it must be a
        /// valid identifier (letters, digits, `_`, not starting with a digit), else the
        /// statement fails with `.invalidQuery`.
        public mutating func appendInterpolation(identifier name: String) {
            segments.append(.identifier(name))
        }

        /// Another statement, spliced with its bound values and tables (one of the same dialect
        /// coverage: a per-dialect statement cannot be spliced).
        public mutating func appendInterpolation(_ fragment: SQL) {
            segments += fragment.segments(for: SQL.anyDialect) ?? []
            tables.formUnion(fragment.tables)
        }
    }
}

/// The rows a hand-written statement returned: column names, and each value as the engine gave
/// it (integers, doubles, text, bytes; PostgreSQL's own types — `numeric`, `uuid`, `timestamptz`
/// — as the matching ``StoredValue``).
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
