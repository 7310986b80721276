import Foundation

/// What one column of the matching rows becomes in a set-based update.
public enum AssignedValue: Sendable, Hashable {
    /// A value (NULL clears an optional column).
    case value(StoredValue)
    /// The value of a numeric column of the same row plus a finite number: integers add exactly
    /// (beyond Int64: `.overflow`), decimals exactly, doubles as IEEE adds them (a result that
    /// overflows to infinity: `.overflow`). NULL plus a number stays NULL.
    case adding(column: String, StoredValue)
}

/// One assignment of a set-based update: `column = value`.
public struct ColumnAssignment: Sendable, Hashable {
    /// The column written.
    public var column: String
    /// What it becomes.
    public var value: AssignedValue

    /// Assigns `value` to `column`.
    public init(_ column: String, _ value: AssignedValue) {
        self.column = column
        self.value = value
    }
}

/// A set-based update as stores see it: which rows of which table, and what their columns become.
public struct UpdateQuery: Sendable, Hashable {
    /// The table written.
    public var table: TableDescription
    /// The rows updated; `nil` updates every row.
    public var predicate: PredicateNode?
    /// What the columns become; each column at most once, no primary-key column.
    public var assignments: [ColumnAssignment]

    /// An update of the rows of `table` matching `predicate`.
    public init(table: TableDescription, predicate: PredicateNode?, assignments: [ColumnAssignment]) {
        self.table = table
        self.predicate = predicate
        self.assignments = assignments
    }

    /// Checks the update against its table before anything is written: what every store calls first.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` naming a column the table lacks, a
    ///   primary-key column (keys are not changed in place), a column assigned twice, no
    ///   assignment at all, a value of another kind than the column's, or an addition to a column
    ///   that is not numeric, of another type, or of a number that is not finite;
    ///   `.constraintViolation` for NULL in a NOT NULL column.
    public func validate() throws {
        try predicate?.validate(against: table)
        guard !assignments.isEmpty else {
            throw DepotError(.invalidQuery, "an update of \(table.name) assigns no column", table: table.name)
        }
        var seen: Set<String> = []
        for assignment in assignments {
            let column = table.columns[try table.requireColumn(assignment.column)]
            func refuse(_ problem: String) -> DepotError {
                DepotError(
                    .invalidQuery, "an update of \(table.name) \(problem)", table: table.name, column: column.name)
            }
            guard seen.insert(column.name).inserted else { throw refuse("assigns column \(column.name) twice") }
            guard !table.primaryKey.contains(column.name) else {
                throw refuse("assigns primary-key column \(column.name) (keys are not changed in place)")
            }
            switch assignment.value {
            case .value(let value):
                if value.isNull {
                    guard column.isNullable else {
                        throw DepotError(
                            .constraintViolation,
                            "an update of \(table.name) sets NOT NULL column \(column.name) to NULL",
                            table: table.name, column: column.name)
                    }
                } else if !value.fits(column.type) {
                    throw refuse("sets column \(column.name) (\(column.type.rawValue)) to \(value.excerpt)")
                } else if value.isNotANumber {
                    throw refuse("sets column \(column.name) to NaN, which Depot does not store")
                }
            case .adding(let source, let addend):
                let from = table.columns[try table.requireColumn(source)]
                guard [.integer, .double, .decimal].contains(column.type), from.type == column.type else {
                    throw refuse(
                        "adds to column \(from.name) (\(from.type.rawValue)) for column \(column.name) "
                            + "(\(column.type.rawValue)): both must be the same numeric type")
                }
                guard addend.fits(column.type) else {
                    throw refuse("adds \(addend.excerpt) to column \(from.name) (\(from.type.rawValue))")
                }
                if case .double(let number) = addend, !number.isFinite {
                    throw refuse("adds \(number) to column \(from.name): the number must be finite")
                }
                if case .decimal(let number) = addend, number.isNaN {
                    throw refuse("adds NaN to column \(from.name)")
                }
            }
        }
    }

    /// The row `row` (every column of ``table``, in order) becomes, or the error naming what did
    /// not fit: what stores without a statement of their own compute.
    package func apply(to row: [StoredValue]) throws -> [StoredValue] {
        var result = row
        for assignment in assignments {
            let target = try table.requireColumn(assignment.column)
            switch assignment.value {
            case .value(let value):
                result[target] = value
            case .adding(let source, let addend):
                let current = row[try table.requireColumn(source)]
                result[target] = try Self.add(current, addend, column: assignment.column, table: table)
            }
        }
        return result
    }

    /// `lhs + rhs` as the SQL stores compute it in an update.
    package static func add(_ lhs: StoredValue, _ rhs: StoredValue, column: String, table: TableDescription) throws
        -> StoredValue
    {
        func overflow(_ detail: String) -> DepotError {
            DepotError(
                .overflow, "an update of \(table.name) makes column \(column) \(detail)", table: table.name,
                column: column)
        }
        switch (lhs, rhs) {
        case (.null, _), (_, .null):
            return .null
        case (.integer(let a), .integer(let b)):
            let (sum, overflowed) = a.addingReportingOverflow(b)
            if overflowed { throw overflow("overflow Int64") }
            return .integer(sum)
        case (.double(let a), .double(let b)):
            let sum = a + b
            if sum.isInfinite && a.isFinite { throw overflow("overflow to \(sum)") }
            return .double(sum)
        case (.decimal(let a), .decimal(let b)):
            return .decimal(a + b)
        default:
            throw overflow("\(lhs.excerpt) + \(rhs.excerpt), which is not a number")
        }
    }
}

extension StoredValue {
    /// Whether this non-NULL value is of the kind a column of `type` stores.
    package func fits(_ type: ColumnType) -> Bool {
        switch (self, type) {
        case (.null, _): true
        case (.bool, .bool), (.integer, .integer), (.double, .double), (.decimal, .decimal), (.blob, .blob),
            (.date, .date), (.uuid, .uuid), (.text, .text), (.text, .url), (.text, .json):
            true
        default: false
        }
    }
}

extension StoreWriter {
    /// Updates the matching rows by reading them and writing each back changed (``WriteMode/update``):
    /// the answer of a store without an `UPDATE` statement of its own (the in-memory store's).
    /// SQL stores run one `UPDATE`.
    ///
    /// - Returns: How many rows matched (and were written).
    /// - Throws: What ``UpdateQuery/validate()`` throws, `.overflow` when an addition does not fit,
    ///   and what ``scan(_:_:)`` and ``write(_:into:mode:)`` throw.
    public func update(_ query: UpdateQuery) async throws -> Int {
        try query.validate()
        let table = query.table
        let rows = try await fetch(SelectQuery(table: table, predicate: query.predicate)) { $0 }
        guard !rows.isEmpty else { return 0 }
        let written = table.primaryKey + query.assignments.map(\.column)
        let positions = try written.map { try table.requireColumn($0) }
        var values: [StoredValue] = []
        values.reserveCapacity(rows.count * written.count)
        for row in rows {
            let updated = try query.apply(to: row)
            values += positions.map { updated[$0] }
        }
        // Matched, as an SQL `UPDATE` counts: rows that hold the values already are not written.
        try await write(RowBatch(columns: written, values: values), into: table, mode: .update)
        return rows.count
    }
}
