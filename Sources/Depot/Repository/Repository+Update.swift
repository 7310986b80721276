/// One assignment of ``Repository/update(where:set:)``: a column and what it becomes, typed by
/// the entity.
///
/// ```swift
/// try await airports.update(where: \.country == "NO", set: [
///     .set(\.city, to: nil), .set(\.elevation, to: \.elevation + 10),
/// ])
/// ```
public struct Assignment<Root: Entity>: Sendable {
    /// The untyped assignment stores run.
    public let assignment: ColumnAssignment
    /// Why the update must fail before it runs (an expression that cannot be computed).
    let refusal: String?

    /// Wraps an untyped assignment; prefer ``set(_:to:)-(KeyPath<Root,Value>,Value)``.
    public init(_ assignment: ColumnAssignment) {
        self.assignment = assignment
        refusal = nil
    }

    init(_ assignment: ColumnAssignment, refusal: String?) {
        self.assignment = assignment
        self.refusal = refusal
    }

    /// The column becomes `value`.
    public static func set<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>, to value: Value) -> Assignment {
        Assignment(ColumnAssignment(Root.schema.referenceName(keyPath), .value(value.storedValue)))
    }

    /// The column becomes `expression`: a numeric column of the same row plus or minus a number.
    public static func set<Value: StorableValue>(
        _ keyPath: KeyPath<Root, Value>, to expression: ColumnExpression<Root, Value>
    ) -> Assignment {
        Assignment(ColumnAssignment(Root.schema.referenceName(keyPath), expression.value), refusal: expression.refusal)
    }
}

/// A numeric column of the same row plus or minus a number (`\.hits + 1`): what
/// ``Assignment/set(_:to:)-(KeyPath<Root,Value>,ColumnExpression<Root,Value>)`` assigns.
public struct ColumnExpression<Root: Entity, Value: StorableValue>: Sendable {
    let value: AssignedValue
    let refusal: String?

    init(value: AssignedValue, refusal: String? = nil) {
        self.value = value
        self.refusal = refusal
    }
}

/// `column + number`, computed by the store for each row (a NULL column stays NULL).
public func + <Root: Entity, Value: StorableValue & AdditiveArithmetic>(
    lhs: KeyPath<Root, Value>, rhs: Value
) -> ColumnExpression<Root, Value> {
    ColumnExpression(value: .adding(column: Root.schema.referenceName(lhs), rhs.storedValue))
}

/// `column + number` for an optional column (NULL stays NULL).
public func + <Root: Entity, Value: StorableValue & AdditiveArithmetic>(
    lhs: KeyPath<Root, Value?>, rhs: Value
) -> ColumnExpression<Root, Value?> {
    ColumnExpression(value: .adding(column: Root.schema.referenceName(lhs), rhs.storedValue))
}

/// `column - number`, computed by the store for each row (a NULL column stays NULL).
public func - <Root: Entity, Value: StorableValue & SignedNumeric>(
    lhs: KeyPath<Root, Value>, rhs: Value
) -> ColumnExpression<Root, Value> {
    negated(Root.schema.referenceName(lhs), rhs.storedValue)
}

/// `column - number` for an optional column (NULL stays NULL).
public func - <Root: Entity, Value: StorableValue & SignedNumeric>(
    lhs: KeyPath<Root, Value?>, rhs: Value
) -> ColumnExpression<Root, Value?> {
    negated(Root.schema.referenceName(lhs), rhs.storedValue)
}

/// `column + (-number)`; the one number without a negation (`Int64.min`) is kept as an addition
/// the update then refuses as an overflow.
private func negated<Root: Entity, Value: StorableValue>(_ column: String, _ value: StoredValue)
    -> ColumnExpression<Root, Value>
{
    switch value {
    case .integer(let number):
        let (negative, overflow) = Int64(0).subtractingReportingOverflow(number)
        return ColumnExpression(
            value: .adding(column: column, .integer(overflow ? 0 : negative)),
            refusal: overflow ? "subtracts \(number) from column \(column), which overflows Int64" : nil)
    case .double(let number): return ColumnExpression(value: .adding(column: column, .double(-number)))
    case .decimal(let number): return ColumnExpression(value: .adding(column: column, .decimal(-number)))
    default: return ColumnExpression(value: .adding(column: column, value))
    }
}

extension Repository {
    /// Assigns columns of every entity matching `predicate`, in one statement inside the store;
    /// returns how many entities matched.
    ///
    /// ```swift
    /// let renamed = try await airports.update(where: \.country == "NO", set: [
    ///     .set(\.city, to: nil), .set(\.elevation, to: \.elevation + 10),
    /// ])
    /// // SQLite:     UPDATE "airports" SET "city" = ?, "elevation" = depot_add("elevation", ?)
    /// //             WHERE "country" = ?
    /// // PostgreSQL: UPDATE "airports" SET "city" = CAST($1 AS text),
    /// //             "elevation" = "elevation" + CAST($2 AS double precision) WHERE "country" COLLATE "C" = $3
    /// ```
    ///
    /// Observers see it like any write. A value for a ``ToOne`` key must name a stored row; keys
    /// themselves are not changed in place (remove and insert instead).
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` for a primary-key column, a column
    ///   assigned twice or no assignment, `.constraintViolation` for NULL in a NOT NULL column or
    ///   a ``ToOne`` value that names no row, `.overflow` when an addition does not fit (nothing
    ///   is written then), and the kinds every call may throw (see ``Repository``).
    @discardableResult
    public func update(where predicate: Filter<Root>? = nil, set assignments: [Assignment<Root>]) async throws -> Int {
        let table = try checkedSchema().table
        let relations = try checkedRelations().filter { $0.kind == .toOne }.map(\.foreignKey)
        let query = UpdateQuery(table: table, predicate: predicate?.node, assignments: assignments.map(\.assignment))
        for assignment in assignments {
            if let refusal = assignment.refusal {
                throw DepotError(
                    .overflow, "an update of \(table.name) \(refusal)", table: table.name,
                    column: assignment.assignment.column)
            }
        }
        try query.validate()
        return try await context.atomically { writer in
            for key in relations {
                guard let assignment = query.assignments.first(where: { $0.column == key.column }) else { continue }
                guard case .value(let value) = assignment.value else {
                    throw DepotError(
                        .invalidQuery,
                        "an update of \(table.name) computes column \(key.column), which holds relation \(key.name): "
                            + "assign it a value", table: table.name, column: key.column)
                }
                try await Integrity.checkReference(value, key: key, writer)
            }
            return try await writer.update(query)
        }
    }

    /// Assigns one column of every entity matching `predicate` (see ``update(where:set:)``).
    ///
    /// ```swift
    /// try await counters.update(where: \.page == "/", set: \.hits, to: \.hits + 1)
    /// ```
    ///
    /// - Throws: ``DepotError``, as ``update(where:set:)`` does.
    @discardableResult
    public func update<Value: StorableValue>(
        where predicate: Filter<Root>? = nil, set keyPath: KeyPath<Root, Value>, to value: Value
    ) async throws -> Int {
        try await update(where: predicate, set: [.set(keyPath, to: value)])
    }

    /// Assigns one column an expression over its row, for every entity matching `predicate`.
    ///
    /// - Throws: ``DepotError``, as ``update(where:set:)`` does.
    @discardableResult
    public func update<Value: StorableValue>(
        where predicate: Filter<Root>? = nil, set keyPath: KeyPath<Root, Value>,
        to expression: ColumnExpression<Root, Value>
    ) async throws -> Int {
        try await update(where: predicate, set: [.set(keyPath, to: expression)])
    }
}
