/// A typed condition (a predicate) on an entity's columns, evaluated inside the store.
///
/// Build predicates from key paths and operators; combine them with `&&`, `||` and `!`:
///
/// ```swift
/// let high = try await airports.fetch(where: \.country == "NO" && \.elevation > 500)
/// // SQLite:     WHERE ("country" = ?) AND ("elevation" > ?)
/// // PostgreSQL: WHERE ("country" COLLATE "C" = $1) AND ("elevation" > $2)
/// let named = try await airports.fetch(where: .contains(\.name, "são", .caseInsensitive))
/// let nordic = try await airports.fetch(where: .in(\.country, ["NO", "SE", "DK"]))
/// let coded = try await airports.count(where: \.iata != nil)
/// ```
///
/// NULL follows SQL: `\.iata == "OSL"` is unknown (not matched) for a row whose `iata` is NULL,
/// and so is `\.iata != "OSL"`; test NULL with `== nil` / `!= nil`.
/// Text compares byte-wise (UTF-8 order) unless a case-insensitive operator is asked for.
///
/// A predicate over one entity cannot be passed where another's is expected: it does not compile.
public struct Filter<Root: Entity>: Sendable {
    /// The untyped tree stores evaluate.
    public let node: PredicateNode

    /// Wraps an untyped tree; prefer the operators.
    public init(_ node: PredicateNode) { self.node = node }

    /// Matches every row.
    public static var all: Filter { Filter(.constant(true)) }
    /// Matches no row.
    public static var nothing: Filter { Filter(.constant(false)) }

    static func column(_ keyPath: AnyKeyPath) -> String { Root.schema.referenceName(keyPath) }

    /// Rows whose column holds one of `values` (`IN`). An empty collection matches nothing.
    ///
    /// ```swift
    /// let nordic = try await airports.fetch(where: .in(\.country, ["NO", "SE", "DK"]))
    /// // SQLite:     WHERE "country" IN (?, ?, ?)
    /// // PostgreSQL: WHERE "country" COLLATE "C" IN ($1, $2, $3)
    /// ```
    ///
    /// Any number of values works: beyond 100 texts or integers, the list is bound as one
    /// parameter (`IN (SELECT value FROM json_each(?))` on SQLite,
    /// `IN (SELECT unnest(CAST($1 AS text[])))` on PostgreSQL) instead of one per value.
    public static func `in`<Value: StorableValue>(
        _ keyPath: KeyPath<Root, Value>, _ values: some Sequence<Value>
    ) -> Filter {
        Filter(.isIn(column: column(keyPath), values.map(\.storedValue)))
    }

    /// Rows whose optional column holds one of `values` (`IN`). NULL never matches.
    public static func `in`<Value: StorableValue>(
        _ keyPath: KeyPath<Root, Value?>, _ values: some Sequence<Value>
    ) -> Filter {
        Filter(.isIn(column: column(keyPath), values.map(\.storedValue)))
    }

    /// Rows whose text column contains `needle`.
    ///
    /// `%` and `_` in `needle` are ordinary characters (no `LIKE` pattern), and an empty needle
    /// matches every non-NULL value. Case-insensitive matching folds both sides with
    /// ``TextFolding/fold(_:)``.
    ///
    /// ```swift
    /// let named = try await airports.fetch(where: .contains(\.name, "são", .caseInsensitive))
    /// // SQLite:     WHERE instr(depot_fold("name"), ?) > 0
    /// // PostgreSQL: WHERE strpos(depot_fold("name"), $1) > 0
    /// // (case-sensitive: instr("name", ?) > 0 and strpos("name", $1) > 0)
    /// ```
    public static func contains(
        _ keyPath: KeyPath<Root, some StorableTextValue>, _ needle: String,
        _ matching: TextMatching = .caseSensitive
    ) -> Filter {
        Filter(.text(column: column(keyPath), .contains, needle, matching: matching))
    }

    /// Rows whose text column starts with `prefix`, byte for byte (or folded, when
    /// case-insensitive).
    ///
    /// ```swift
    /// let norwegian = try await airports.fetch(where: .hasPrefix(\.icao, "EN"))
    /// // SQLite:     WHERE substr("icao", 1, length(?)) = ?
    /// // PostgreSQL: WHERE starts_with("icao", $1)
    /// ```
    public static func hasPrefix(
        _ keyPath: KeyPath<Root, some StorableTextValue>, _ prefix: String,
        _ matching: TextMatching = .caseSensitive
    ) -> Filter {
        Filter(.text(column: column(keyPath), .hasPrefix, prefix, matching: matching))
    }

    /// Rows whose text column ends with `suffix`, byte for byte (or folded, when
    /// case-insensitive).
    ///
    /// ```swift
    /// let fields = try await airports.fetch(where: .hasSuffix(\.name, "field", .caseInsensitive))
    /// // SQLite:     WHERE substr(depot_fold("name"), length(depot_fold("name")) - length(?) + 1) = ?
    /// // PostgreSQL: WHERE right(depot_fold("name"), length($1)) = $2
    /// ```
    public static func hasSuffix(
        _ keyPath: KeyPath<Root, some StorableTextValue>, _ suffix: String,
        _ matching: TextMatching = .caseSensitive
    ) -> Filter {
        Filter(.text(column: column(keyPath), .hasSuffix, suffix, matching: matching))
    }

    /// Both conditions hold: `(lhs) AND (rhs)`. Chains of `&&` make one flat `AND`.
    public static func && (lhs: Filter, rhs: Filter) -> Filter {
        switch (lhs.node, rhs.node) {
        case (.and(let left), .and(let right)): Filter(.and(left + right))
        case (.and(let left), let right): Filter(.and(left + [right]))
        default: Filter(.and([lhs.node, rhs.node]))
        }
    }

    /// Either condition holds: `(lhs) OR (rhs)`. Chains of `||` make one flat `OR`.
    public static func || (lhs: Filter, rhs: Filter) -> Filter {
        switch (lhs.node, rhs.node) {
        case (.or(let left), .or(let right)): Filter(.or(left + right))
        case (.or(let left), let right): Filter(.or(left + [right]))
        default: Filter(.or([lhs.node, rhs.node]))
        }
    }

    /// The condition does not hold: `NOT (predicate)`. Unknown stays unknown, so
    /// `!(\.iata == "OSL")` does not match a row whose `iata` is NULL.
    public static prefix func ! (predicate: Filter) -> Filter {
        Filter(.not(predicate.node))
    }
}

/// Text attributes: `String`, `String?`, and types stored as text (text operators apply to them).
public protocol StorableTextValue: StorableValue {}
extension String: StorableTextValue {}
extension Optional: StorableTextValue where Wrapped: StorableTextValue {}

// MARK: - Comparison operators

private func compare<Root: Entity, Value: StorableValue>(
    _ keyPath: KeyPath<Root, Value>, _ op: ComparisonOperator, _ value: StoredValue
) -> Filter<Root> {
    Filter(.compare(column: Root.schema.referenceName(keyPath), op, value))
}

/// Rows whose column equals `value`. Comparing with a nil optional tests `IS NULL`.
public func == <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    let stored = rhs.storedValue
    if stored.isNull { return Filter(.isNull(column: Root.schema.referenceName(lhs))) }
    return compare(lhs, .equal, stored)
}

/// Rows whose column differs from `value` (NULL rows are unknown, so not matched).
/// Comparing with a nil optional tests `IS NOT NULL`.
public func != <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    let stored = rhs.storedValue
    if stored.isNull { return Filter(.isNotNull(column: Root.schema.referenceName(lhs))) }
    return compare(lhs, .notEqual, stored)
}

/// Rows whose optional column equals `value`.
public func == <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .equal, rhs.storedValue)
}

/// Rows whose optional column holds a value different from `value`.
public func != <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .notEqual, rhs.storedValue)
}

/// Rows whose optional column is NULL.
public func == <Root: Entity, Value: StorableValue>(
    lhs: KeyPath<Root, Value?>, rhs: _OptionalNilComparisonType
) -> Filter<Root> {
    Filter(.isNull(column: Root.schema.referenceName(lhs)))
}

/// Rows whose optional column is not NULL.
public func != <Root: Entity, Value: StorableValue>(
    lhs: KeyPath<Root, Value?>, rhs: _OptionalNilComparisonType
) -> Filter<Root> {
    Filter(.isNotNull(column: Root.schema.referenceName(lhs)))
}

/// Rows whose column is less than `rhs`.
///
/// ```swift
/// let lowland = try await airports.fetch(where: \.elevation < 100)
/// // SQLite:     WHERE "elevation" < ?
/// // PostgreSQL: WHERE "elevation" < $1
/// ```
///
/// Every store compares values alike: text by UTF-8 bytes (PostgreSQL compares the column
/// `COLLATE "C"`), decimals by value (SQLite compares the stored digits `COLLATE depot_decimal`).
/// A row whose column is NULL never matches.
public func < <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .less, rhs.storedValue)
}

/// Rows whose column is less than or equal to `rhs` (`"elevation" <= ?`), compared as for `<`.
public func <= <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .lessOrEqual, rhs.storedValue)
}

/// Rows whose column is greater than `rhs` (`"elevation" > ?`), compared as for `<`.
///
/// ```swift
/// let high = try await airports.fetch(where: \.elevation > 500)
/// ```
public func > <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greater, rhs.storedValue)
}

/// Rows whose column is greater than or equal to `rhs` (`"elevation" >= ?`), compared as for `<`.
public func >= <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greaterOrEqual, rhs.storedValue)
}

/// Rows whose optional column holds a value less than `rhs`; NULL rows never match.
///
/// ```swift
/// let shortCodes = try await airports.fetch(where: \.iata < "C")  // `iata` is a `String?`
/// // SQLite:     WHERE "iata" < ?
/// // PostgreSQL: WHERE "iata" COLLATE "C" < $1
/// ```
public func < <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .less, rhs.storedValue)
}

/// Rows whose optional column holds a value less than or equal to `rhs`; NULL rows never match.
public func <= <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .lessOrEqual, rhs.storedValue)
}

/// Rows whose optional column holds a value greater than `rhs`; NULL rows never match.
public func > <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greater, rhs.storedValue)
}

/// Rows whose optional column holds a value greater than or equal to `rhs`; NULL rows never
/// match.
public func >= <Root: Entity, Value: StorableValue>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greaterOrEqual, rhs.storedValue)
}

// MARK: - JSON values have no order

// JSON values compare for equality (their canonical text: sorted keys, on every store), but have
// no order the stores share (PostgreSQL orders `jsonb` by its own rules, SQLite by text): `<`,
// `<=`, `>` and `>=` on a JSON column do not compile. Compare a member stored in a column of its own.

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func < <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .less, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func <= <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .lessOrEqual, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func > <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greater, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func >= <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greaterOrEqual, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func < <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .less, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func <= <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .lessOrEqual, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func > <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greater, rhs.storedValue)
}

/// Unavailable: JSON values have no order every store shares.
@available(*, unavailable, message: "JSON values have no order every store shares; compare a member of its own column")
public func >= <Root: Entity, Value: StorableAsJSON>(lhs: KeyPath<Root, Value?>, rhs: Value) -> Filter<Root> {
    compare(lhs, .greaterOrEqual, rhs.storedValue)
}
