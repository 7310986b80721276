/// An aggregate over an entity's rows, typed by its result: what ``Repository/aggregate(_:where:)``
/// and ``Repository/group(by:computing:where:having:orderBy:limit:offset:)`` compute inside the
/// store.
///
/// ```swift
/// let (airports, highest, mean) = try await repository.aggregate(
///     .count, .max(\.elevation), .average(\.elevation), where: \.country == "NO")
/// // SELECT COUNT(*), MAX("elevation"), (SUM("elevation") * 1.0 / NULLIF(COUNT("elevation"), 0))
/// //   FROM "airports" WHERE "country" = ?
/// ```
///
/// NULL values are ignored, as SQL does: `count(\.iata)` counts the rows with a code, `sum` adds
/// the non-NULL values (0 when there are none), `average`, `min` and `max` are `nil` when there
/// are none.
public struct Aggregate<Root: Entity, Value: Sendable>: Sendable {
    /// The untyped term stores compute.
    public let term: AggregateTerm
    let decode: @Sendable (StoredValue) throws(StoredValueMismatch) -> Value

    init(_ term: AggregateTerm, decode: @escaping @Sendable (StoredValue) throws(StoredValueMismatch) -> Value) {
        self.term = term
        self.decode = decode
    }

    static func column(_ keyPath: AnyKeyPath) -> String { Root.schema.referenceName(keyPath) }

    /// Decodes the store's value of this aggregate, naming it when it does not fit `Value`.
    func value(_ stored: StoredValue, table: TableDescription) throws -> Value {
        do {
            return try decode(stored)
        } catch {
            throw DepotError(
                .decodingFailed,
                "\(term.function.rawValue)(\(term.column ?? "*")) of \(Root.self) (table '\(table.name)') "
                    + "\(error)", table: table.name, column: term.column)
        }
    }
}

extension Aggregate where Value == Int {
    /// How many rows: `COUNT(*)`.
    public static var count: Aggregate {
        Aggregate(AggregateTerm(.count, nil)) { stored throws(StoredValueMismatch) in try Int(storedValue: stored) }
    }

    /// How many rows hold a value (not NULL) in the column: `COUNT(column)`.
    public static func count(_ keyPath: KeyPath<Root, some StorableValue>) -> Aggregate {
        Aggregate(AggregateTerm(.count, column(keyPath))) { stored throws(StoredValueMismatch) in
            try Int(storedValue: stored)
        }
    }
}

extension Aggregate where Value: StorableValue & AdditiveArithmetic {
    /// The sum of the column's values: exact for integers (an overflow of Int64 throws
    /// `.overflow`) and decimals, as the engine adds them for floating point; 0 without values.
    public static func sum(_ keyPath: KeyPath<Root, Value>) -> Aggregate {
        Aggregate(AggregateTerm(.sum, column(keyPath))) { stored throws(StoredValueMismatch) in
            try Value(storedValue: stored)
        }
    }

    /// The sum of the optional column's values, NULLs left out; 0 without values.
    public static func sum(_ keyPath: KeyPath<Root, Value?>) -> Aggregate {
        Aggregate(AggregateTerm(.sum, column(keyPath))) { stored throws(StoredValueMismatch) in
            try Value(storedValue: stored)
        }
    }
}

extension Aggregate {
    /// The mean of the column's values, as a Double (the exact sum divided by the count for
    /// integers); `nil` without values.
    public static func average<Number: StorableValue & Numeric>(_ keyPath: KeyPath<Root, Number>) -> Aggregate
    where Value == Double? {
        Aggregate(AggregateTerm(.average, column(keyPath))) { stored throws(StoredValueMismatch) in
            try Double?(storedValue: stored)
        }
    }

    /// The mean of the optional column's values, NULLs left out; `nil` without values.
    public static func average<Number: StorableValue & Numeric>(_ keyPath: KeyPath<Root, Number?>) -> Aggregate
    where Value == Double? {
        Aggregate(AggregateTerm(.average, column(keyPath))) { stored throws(StoredValueMismatch) in
            try Double?(storedValue: stored)
        }
    }

    /// The smallest value, in the order `orderBy: [.ascending(keyPath)]` uses (text by UTF-8
    /// bytes); `nil` without values.
    public static func min<Ordered: StorableValue & Comparable>(_ keyPath: KeyPath<Root, Ordered>) -> Aggregate
    where Value == Ordered? {
        extreme(.min, keyPath)
    }

    /// The smallest value of the optional column, NULLs left out; `nil` without values.
    public static func min<Ordered: StorableValue & Comparable>(_ keyPath: KeyPath<Root, Ordered?>) -> Aggregate
    where Value == Ordered? {
        extreme(.min, keyPath)
    }

    /// The largest value, in the order `orderBy: [.descending(keyPath)]` uses; `nil` without values.
    public static func max<Ordered: StorableValue & Comparable>(_ keyPath: KeyPath<Root, Ordered>) -> Aggregate
    where Value == Ordered? {
        extreme(.max, keyPath)
    }

    /// The largest value of the optional column, NULLs left out; `nil` without values.
    public static func max<Ordered: StorableValue & Comparable>(_ keyPath: KeyPath<Root, Ordered?>) -> Aggregate
    where Value == Ordered? {
        extreme(.max, keyPath)
    }

    private static func extreme<Ordered: StorableValue>(_ function: AggregateFunction, _ keyPath: AnyKeyPath)
        -> Aggregate where Value == Ordered?
    {
        Aggregate(AggregateTerm(function, column(keyPath))) { stored throws(StoredValueMismatch) in
            try Ordered?(storedValue: stored)
        }
    }
}

/// A condition on groups (SQL's `HAVING`), built by comparing an ``Aggregate`` with a value and
/// combined with `&&`, `||` and `!`.
///
/// ```swift
/// having: Aggregate.count > 100 && Aggregate.max(\.elevation) >= 1_000
/// ```
public struct AggregateFilter<Root: Entity>: Sendable {
    /// The untyped condition stores evaluate.
    public let node: AggregatePredicate

    /// Wraps an untyped condition; prefer the operators.
    public init(_ node: AggregatePredicate) { self.node = node }

    /// Both conditions hold.
    public static func && (lhs: AggregateFilter, rhs: AggregateFilter) -> AggregateFilter {
        AggregateFilter(.and([lhs.node, rhs.node]))
    }

    /// Either condition holds.
    public static func || (lhs: AggregateFilter, rhs: AggregateFilter) -> AggregateFilter {
        AggregateFilter(.or([lhs.node, rhs.node]))
    }

    /// The condition does not hold (unknown stays unknown).
    public static prefix func ! (filter: AggregateFilter) -> AggregateFilter {
        AggregateFilter(.not(filter.node))
    }
}

extension Aggregate where Value: StorableValue {
    /// The aggregate equals `value`.
    public static func == (lhs: Aggregate, rhs: Value) -> AggregateFilter<Root> { lhs.compare(.equal, rhs) }
    /// The aggregate differs from `value`.
    public static func != (lhs: Aggregate, rhs: Value) -> AggregateFilter<Root> { lhs.compare(.notEqual, rhs) }
    /// The aggregate is smaller than `value`.
    public static func < (lhs: Aggregate, rhs: Value) -> AggregateFilter<Root> { lhs.compare(.less, rhs) }
    /// The aggregate is smaller than or equal to `value`.
    public static func <= (lhs: Aggregate, rhs: Value) -> AggregateFilter<Root> { lhs.compare(.lessOrEqual, rhs) }
    /// The aggregate is larger than `value`.
    public static func > (lhs: Aggregate, rhs: Value) -> AggregateFilter<Root> { lhs.compare(.greater, rhs) }
    /// The aggregate is larger than or equal to `value`.
    public static func >= (lhs: Aggregate, rhs: Value) -> AggregateFilter<Root> {
        lhs.compare(.greaterOrEqual, rhs)
    }

    private func compare(_ op: ComparisonOperator, _ value: Value) -> AggregateFilter<Root> {
        AggregateFilter(.compare(term, op, value.storedValue))
    }
}

/// One term of the order of grouped results: by an aggregate or by a grouping column. Groups
/// always end ordered by their grouping columns, so every order is total.
public struct AggregateOrdering<Root: Entity>: Sendable {
    /// The untyped term stores evaluate.
    public let term: AggregateOrderTerm

    /// Wraps an untyped term; prefer the static builders.
    public init(_ term: AggregateOrderTerm) { self.term = term }

    /// Smallest aggregate first; NULL first.
    public static func ascending<Value>(_ aggregate: Aggregate<Root, Value>) -> AggregateOrdering {
        AggregateOrdering(.aggregate(aggregate.term, descending: false))
    }

    /// Largest aggregate first; NULL last.
    public static func descending<Value>(_ aggregate: Aggregate<Root, Value>) -> AggregateOrdering {
        AggregateOrdering(.aggregate(aggregate.term, descending: true))
    }

    /// By a grouping column, smallest first; NULL first.
    public static func ascending(_ keyPath: KeyPath<Root, some StorableValue>) -> AggregateOrdering {
        AggregateOrdering(.group(Root.schema.referenceName(keyPath), descending: false))
    }

    /// By a grouping column, largest first; NULL last.
    public static func descending(_ keyPath: KeyPath<Root, some StorableValue>) -> AggregateOrdering {
        AggregateOrdering(.group(Root.schema.referenceName(keyPath), descending: true))
    }
}
