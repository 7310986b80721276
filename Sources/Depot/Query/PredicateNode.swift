/// A predicate as stores see it: a tree over column names and stored values.
///
/// SQL stores render it to a `WHERE` clause with bound parameters; the in-memory store
/// evaluates it with SQL's three-valued logic. Build it through the typed ``Predicate``.
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
    case text(column: String, TextOperator, String, caseInsensitive: Bool)
    case and([PredicateNode])
    case or([PredicateNode])
    case not(PredicateNode)
    /// Always true or always false.
    case constant(Bool)

    /// The column names this predicate reads.
    public var columns: Set<String> {
        switch self {
        case .compare(let column, _, _), .isNull(let column), .isNotNull(let column), .isIn(let column, _),
            .text(let column, _, _, _):
            return [column]
        case .and(let nodes), .or(let nodes):
            return nodes.reduce(into: []) { $0.formUnion($1.columns) }
        case .not(let node):
            return node.columns
        case .constant:
            return []
        }
    }
}

/// A comparison between a column and a value.
public enum ComparisonOperator: String, Sendable, Hashable {
    case equal = "="
    case notEqual = "<>"
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A text match on a column.
public enum TextOperator: String, Sendable, Hashable {
    case contains
    case hasPrefix
    case hasSuffix
}

/// Whether a text match respects case.
public enum TextMatching: Sendable, Hashable {
    /// Byte-for-byte: "Oslo" does not match "oslo".
    case caseSensitive
    /// Full Unicode case folding after NFC normalization, identical on every store:
    /// "são" matches "SÃO PAULO", "strasse" matches "Straße".
    case caseInsensitive
}
