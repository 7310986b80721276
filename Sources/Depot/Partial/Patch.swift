/// A partial update of one row: its primary key and the columns to assign.
///
/// Build it from plain values and ``Field``s: an absent field assigns nothing, a `null` one
/// clears the column, a value sets it.
///
/// ```swift
/// let patch = Patch<User>(key: dto.id)
///     .set(\.name, dto.$name)          // absent: name untouched
///     .set(\.isOnline, dto.$isOnline)  // null: isOnline cleared
///     .set(\.lastSeen, Date())         // always set
/// try await users.apply([patch])
/// // `name` is absent and required, so the row is updated, never created:
/// // SQLite:     UPDATE "users" SET "isOnline" = ?2, "lastSeen" = ?3 WHERE "id" = ?1
/// // PostgreSQL: UPDATE "users" SET "isOnline" = u.c2, "lastSeen" = u.c3
/// //             FROM UNNEST(CAST($1 AS bigint[]), …) AS u(c1, c2, c3) WHERE "users"."id" = u.c1
/// ```
///
/// A patch assigning every required column is written as an upsert instead
/// (`INSERT … ON CONFLICT ("id") DO UPDATE SET` the assigned columns).
///
/// Applying a patch to a stored row changes only the assigned columns. A patch for a key that
/// is not stored creates the row when it assigns every required (non-optional) column, and
/// otherwise fails naming the missing columns.
public struct Patch<Root: Entity>: Sendable {
    /// The primary-key values, in key order.
    public let key: [StoredValue]
    /// Assigned columns and their values, in assignment order.
    private(set) var assignments: [ColumnValue] = []
    /// Assignments that cannot be made (`null` for a non-optional column), reported on apply.
    private(set) var problems: [(kind: DepotError.Kind, message: String)] = []

    /// A patch of the row whose single-column primary key is `key`, assigning nothing yet.
    ///
    /// A key of the wrong arity (one value for a composite key) fails when the patch is applied.
    public init<Key: StorableValue>(key: Key) {
        self.key = [key.storedValue]
    }

    /// A patch of the row whose two-column primary key is (`first`, `second`).
    public init<First: StorableValue, Second: StorableValue>(key first: First, _ second: Second) {
        self.key = [first.storedValue, second.storedValue]
    }

    private consuming func assigning(_ keyPath: AnyKeyPath, _ value: StoredValue) -> Patch {
        var copy = self
        guard let index = Root.schema.columnIndex(keyPath) else {
            copy.problems.append((.invalidQuery, Root.schema.notAColumn(keyPath).message))
            return copy
        }
        copy.assign(ColumnValue(column: index, value: value))
        return copy
    }

    /// Sets a column's value, replacing an earlier assignment of it.
    private mutating func assign(_ assignment: ColumnValue) {
        if let earlier = assignments.firstIndex(where: { $0.column == assignment.column }) {
            assignments.remove(at: earlier)
        }
        assignments.append(assignment)
    }

    /// `assigning(_:_:)` with `value`'s stored form; a JSON value whose `encode(to:)` throws
    /// makes the patch fail when it is applied (`.encodingFailed`, naming the column).
    private consuming func assigning<Value: StorableValue>(_ keyPath: AnyKeyPath, _ value: Value) -> Patch {
        let stored = value.storedValue
        if Value.columnType == .json, stored == .text("null"), let json = value as? any StorableAsJSON {
            do {
                _ = try json.jsonText()
            } catch {
                var copy = self
                let column = Root.schema.columnIndex(keyPath).map { Root.schema.columns[$0].name } ?? "\(keyPath)"
                copy.problems.append((.encodingFailed, "column \(column) cannot be stored as JSON: \(error)"))
                return copy
            }
        }
        return assigning(keyPath, stored)
    }

    /// Assigns `value` to the column for `keyPath`, replacing an earlier assignment of it.
    ///
    /// ```swift
    /// let patch = Patch<Airport>(key: "ENGM").set(\.elevation, 208)
    /// ```
    ///
    /// A key path that is not a column of the schema fails the patch when it is applied
    /// (`DepotError` of kind `.invalidQuery`, naming it).
    public consuming func set<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>, _ value: Value) -> Patch {
        assigning(keyPath, value)
    }

    /// Assigns a field to an optional column: absent assigns nothing, `null` clears it.
    public consuming func set<Value: StorableValue>(_ keyPath: KeyPath<Root, Value?>, _ field: Field<Value>) -> Patch {
        switch field {
        case .absent: self
        case .null: assigning(keyPath, .null)
        case .value(let value): assigning(keyPath, value)
        }
    }

    /// Assigns a field to a non-optional column: absent assigns nothing; `null` cannot be
    /// stored there and fails when the patch is applied, naming the column.
    public consuming func set<Value: StorableValue>(_ keyPath: KeyPath<Root, Value>, _ field: Field<Value>) -> Patch {
        switch field {
        case .absent:
            return self
        case .value(let value):
            return assigning(keyPath, value)
        case .null:
            var copy = self
            let column = Root.schema.columnIndex(keyPath).map { Root.schema.columns[$0].name } ?? "\(keyPath)"
            copy.problems.append((.invalidQuery, "null for non-optional column \(column)"))
            return copy
        }
    }

    /// The names of the assigned columns, in schema order.
    public var assignedColumns: [String] {
        assignments.map(\.column).sorted().map { Root.schema.columns[$0].name }
    }

    /// Whether the patch assigns nothing.
    public var isEmpty: Bool { assignments.isEmpty }

    /// A patch of `entity`'s row assigning every column: what a full upsert writes.
    public init(_ entity: Root) {
        let schema = Root.schema
        self.key = schema.key(of: entity)
        let values = schema.values(of: entity)
        self.assignments = values.enumerated().map { ColumnValue(column: $0.offset, value: $0.element) }
        do {
            try schema.checkEncoded(entity, values: values[...])
        } catch {
            problems.append((error.kind, error.message))
        }
    }

    /// The assigned columns and their stored values, in schema order: what a sync layer keeps and
    /// sends.
    ///
    /// ```swift
    /// Patch<Airport>(key: "ENGM").set(\.iata, "OSL").assignedValues   // [("iata", .text("OSL"))]
    /// ```
    public var assignedValues: [(column: String, value: StoredValue)] {
        assignments.sorted { $0.column < $1.column }.map { (Root.schema.columns[$0.column].name, $0.value) }
    }

    /// Whether the patch assigns every required (non-optional, non-key) column: applied to a key
    /// that is not stored, it creates the row instead of failing.
    public var assignsEveryRequiredColumn: Bool {
        for index in Root.schema.requiredColumnIndices where !assignments.contains(where: { $0.column == index }) {
            return false
        }
        return true
    }

    /// A patch of the row with primary key `key` (in key order) assigning stored values by column
    /// name: how a sync layer rebuilds a patch it kept as values.
    ///
    /// A name that is not a column of the schema fails the patch when it is applied
    /// (`DepotError` of kind `.invalidQuery`, naming it).
    public init(key: [StoredValue], values: some Sequence<(column: String, value: StoredValue)>) {
        self.key = key
        let schema = Root.schema
        for (column, value) in values {
            guard let index = schema.columns.firstIndex(where: { $0.name == column }) else {
                problems.append((.invalidQuery, "\(Root.self) has no column '\(column)' (table \(schema.tableName))"))
                continue
            }
            assign(ColumnValue(column: index, value: value))
        }
    }

    /// This patch with `later`'s assignments applied on top, column by column.
    func merged(with later: Patch) -> Patch {
        var copy = self
        for assignment in later.assignments { copy.assign(assignment) }
        copy.problems += later.problems
        return copy
    }
}

/// One assigned column of a ``Patch``: its index into the schema's columns, and its value. (Not a
/// tuple, and not nested in the generic `Patch`: either makes generic code look its metadata up at
/// run time.)
struct ColumnValue: Sendable {
    var column: Int
    var value: StoredValue
}
