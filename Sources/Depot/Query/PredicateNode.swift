/// A predicate as stores see it: a tree over column names and stored values.
///
/// SQL stores render it to a `WHERE` clause with bound parameters; the in-memory store
/// evaluates it with SQL's three-valued logic. Build it through the typed ``Filter``, whose
/// ``Filter/node`` it is:
///
/// ```swift
/// (\Airport.country == "NO").node  // .compare(column: "country", .equal, .text("NO"))
/// ```
public indirect enum PredicateNode: Sendable, Hashable {
    /// Compares a column with a value. A NULL on either side makes the comparison unknown.
    case compare(column: String, ComparisonOperator, StoredValue)
    /// `column IS NULL`.
    case isNull(column: String)
    /// `column IS NOT NULL`.
    case isNotNull(column: String)
    /// `column IN (values)`; an empty list matches nothing.
    case isIn(column: String, [StoredValue])
    /// A text match; `%` and `_` in the needle are literal characters.
    case text(column: String, TextOperator, String, matching: TextMatching)
    /// Every node holds; an empty list is true.
    case and([PredicateNode])
    /// At least one node holds; an empty list is false.
    case or([PredicateNode])
    /// The node does not hold; unknown stays unknown.
    case not(PredicateNode)
    /// Always true or always false.
    case constant(Bool)
    /// `column IN (SELECT subquery.column FROM subquery.table WHERE subquery.predicate)`: what
    /// predicates across relations compile to. NULLs in the selected column never match, so
    /// `NOT` of it is two-valued for a non-NULL `column`.
    case isInSubquery(column: String, Subquery)
    /// Rows whose coordinates (two columns of degrees) lie within `kilometers` of `center` by
    /// great-circle (haversine) distance, ``GeoDistance``'s; rows with a NULL coordinate, or one
    /// outside -90…90 (latitude) or -180…180 (longitude), never match. SQL stores add a bounding
    /// box over the two columns, so an index on the latitude (or both) serves it.
    case withinDistance(latitudeColumn: String, longitudeColumn: String, center: Coordinate, kilometers: Double)
    /// Rows whose text column holds, for each token, a word starting with it (``TextSearch``);
    /// tokens come folded, without diacritics for ``TextMatching/caseAndDiacriticInsensitive``.
    /// NULL never matches; no tokens match every row. SQL stores answer it from the column's
    /// search index (``MigrationOperation/createSearchIndex(_:_:)``).
    case matches(column: String, tokens: [String], matching: TextMatching)

    /// The column names this predicate reads.
    public var columns: Set<String> {
        switch self {
        case .compare(let column, _, _), .isNull(let column), .isNotNull(let column), .isIn(let column, _),
            .text(let column, _, _, _), .isInSubquery(let column, _), .matches(let column, _, _):
            return [column]
        case .and(let nodes), .or(let nodes):
            return nodes.reduce(into: []) { $0.formUnion($1.columns) }
        case .not(let node):
            return node.columns
        case .constant:
            return []
        case .withinDistance(let latitude, let longitude, _, _):
            return [latitude, longitude]
        }
    }

    /// The subqueries this predicate holds, outermost first (not those nested inside them).
    package var subqueries: [Subquery] {
        switch self {
        case .isInSubquery(_, let subquery): [subquery]
        case .and(let nodes), .or(let nodes): nodes.flatMap(\.subqueries)
        case .not(let node): node.subqueries
        default: []
        }
    }

    /// Every table read by subqueries, at any depth.
    public var subqueryTables: [TableDescription] {
        subqueries.flatMap { [$0.table] + ($0.predicate?.subqueryTables ?? []) }
    }

    /// The predicate with subqueries over tables named in `missing` replaced by their answer:
    /// a table that does not exist yet holds no rows, so `IN` it is false.
    package func replacingSubqueries(over missing: Set<String>) -> PredicateNode {
        guard !missing.isEmpty else { return self }
        return resolvingSubqueries { !missing.contains($0.name) }
    }

    /// The predicate with subqueries over tables that do not exist (`exists` answers false)
    /// replaced by `false`; what every store runs, so a subquery never names a missing table.
    package func resolvingSubqueries(exists: (TableDescription) throws -> Bool) rethrows -> PredicateNode {
        switch self {
        case .isInSubquery(let column, var subquery):
            guard try exists(subquery.table) else { return .constant(false) }
            subquery.predicate = try subquery.predicate?.resolvingSubqueries(exists: exists)
            return .isInSubquery(column: column, subquery)
        case .and(let nodes): return .and(try nodes.map { try $0.resolvingSubqueries(exists: exists) })
        case .or(let nodes): return .or(try nodes.map { try $0.resolvingSubqueries(exists: exists) })
        case .not(let node): return .not(try node.resolvingSubqueries(exists: exists))
        default: return self
        }
    }

    /// ``resolvingSubqueries(exists:)`` for stores that check tables asynchronously.
    package func resolvingSubqueries(exists: (TableDescription) async throws -> Bool) async rethrows -> PredicateNode {
        switch self {
        case .isInSubquery(let column, var subquery):
            guard try await exists(subquery.table) else { return .constant(false) }
            subquery.predicate = try await subquery.predicate?.resolvingSubqueries(exists: exists)
            return .isInSubquery(column: column, subquery)
        case .and(let nodes):
            var resolved: [PredicateNode] = []
            for node in nodes { resolved.append(try await node.resolvingSubqueries(exists: exists)) }
            return .and(resolved)
        case .or(let nodes):
            var resolved: [PredicateNode] = []
            for node in nodes { resolved.append(try await node.resolvingSubqueries(exists: exists)) }
            return .or(resolved)
        case .not(let node): return .not(try await node.resolvingSubqueries(exists: exists))
        default: return self
        }
    }

    /// Checks every column the predicate names against `table`, and its subqueries' against
    /// theirs: what a store does before it runs a read or a removal.
    ///
    /// - Throws: `DepotError` of kind `.invalidQuery` naming the first column that is not there
    ///   (or the key path that is not a column).
    public func validate(against table: TableDescription) throws {
        for name in columns { _ = try table.requireColumn(name) }
        try refuseNotANumber(table: table.name)
        try validateSubqueries()
    }

    /// Refuses a comparison with NaN: Depot stores no NaN, and the engines disagree on what such
    /// a comparison matches (PostgreSQL orders NaN above every number, IEEE matches nothing).
    func refuseNotANumber(table: String) throws {
        var compared: String?
        switch self {
        case .compare(let column, _, let value) where value.isNotANumber: compared = column
        case .isIn(let column, let values) where values.contains(where: \.isNotANumber): compared = column
        case .withinDistance(let latitude, _, let center, let kilometers)
        where center.latitude.isNaN || center.longitude.isNaN || kilometers.isNaN:
            compared = latitude
        case .and(let nodes), .or(let nodes):
            for node in nodes { try node.refuseNotANumber(table: table) }
        case .not(let node):
            try node.refuseNotANumber(table: table)
        default:
            break
        }
        if let column = compared {
            throw DepotError(
                .invalidQuery,
                "a filter compares column \(column) of \(table) with NaN; Depot stores no NaN, so the comparison "
                    + "can match nothing (use a finite bound, or .isNull for a missing value)",
                table: table, column: column)
        }
    }

    /// Checks the columns of every subquery against its table.
    func validateSubqueries() throws {
        for subquery in subqueries {
            try subquery.predicate?.refuseNotANumber(table: subquery.table.name)
            _ = try subquery.table.requireColumn(subquery.column)
            for name in subquery.predicate?.columns ?? [] { _ = try subquery.table.requireColumn(name) }
            try subquery.predicate?.validateSubqueries()
        }
    }
}

/// The values of one column of the rows of a table that match a predicate: the right-hand side
/// of ``PredicateNode/isInSubquery(column:_:)``.
public struct Subquery: Sendable, Hashable {
    /// The table read.
    public var table: TableDescription
    /// The column selected.
    public var column: String
    /// The rows selected; `nil` selects every row. NULL values of `column` are never selected.
    public var predicate: PredicateNode?

    /// The values of `column` in the rows of `table` matching `predicate` (every row when `nil`).
    public init(table: TableDescription, column: String, predicate: PredicateNode?) {
        self.table = table
        self.column = column
        self.predicate = predicate
    }
}

/// A comparison between a column and a value.
///
/// The raw value is the SQL operator.
public enum ComparisonOperator: String, Sendable, Hashable {
    /// `=`: the column equals the value.
    case equal = "="
    /// `<>`: the column differs from the value.
    case notEqual = "<>"
    /// `<`: the column is smaller.
    case less = "<"
    /// `<=`: the column is smaller or equal.
    case lessOrEqual = "<="
    /// `>`: the column is larger.
    case greater = ">"
    /// `>=`: the column is larger or equal.
    case greaterOrEqual = ">="
}

/// A text match on a column.
public enum TextOperator: String, Sendable, Hashable {
    /// The text contains the needle.
    case contains
    /// The text starts with the needle.
    case hasPrefix
    /// The text ends with the needle.
    case hasSuffix
}

/// Whether a text match respects case.
public enum TextMatching: Sendable, Hashable {
    /// Byte-for-byte: "Oslo" does not match "oslo".
    case caseSensitive
    /// Full Unicode case folding after NFC normalization, identical on every store:
    /// "são" matches "SÃO PAULO", "strasse" matches "Straße".
    case caseInsensitive
    /// Case folding as ``caseInsensitive``, then diacritics removed
    /// (``TextFolding/foldIgnoringDiacritics(_:)``): "sao" matches "SÃO PAULO", "orebro" matches
    /// "Örebro".
    case caseAndDiacriticInsensitive

    /// The text compared for this matching: `text` itself, folded, or folded without diacritics.
    public func apply(_ text: String) -> String {
        switch self {
        case .caseSensitive: text
        case .caseInsensitive: TextFolding.fold(text)
        case .caseAndDiacriticInsensitive: TextFolding.foldIgnoringDiacritics(text)
        }
    }
}

extension PredicateNode {
    /// The rows whose primary key (`primaryKey`'s columns, in order) is one of `keys`: `IN` for a
    /// single-column key, an `OR` of `AND`s for a composite one (callers chunk long lists).
    package static func matching(keys: some Collection<[StoredValue]>, primaryKey: [String]) -> PredicateNode {
        if primaryKey.count == 1 { return .isIn(column: primaryKey[0], keys.map { $0[0] }) }
        return .or(keys.map { key in .and(zip(primaryKey, key).map { .compare(column: $0, .equal, $1) }) })
    }
}
