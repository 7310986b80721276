import Depot
import Foundation

/// SQLite 3.35 or later (upsert, `NULLS LAST`). Case folding, distance and exact-decimal ordering
/// use the functions and collation `SQLiteStore` registers on each connection
/// (``SQLFunctions``).
public struct SQLiteDialect: SQLDialect {
    /// SQLite's dialect.
    public init() {}

    /// The key of SQLite's text in hand-written SQL: `sqlite`.
    public var name: String { "sqlite" }
    /// `SQLite`, as messages name the engine.
    public var displayName: String { "SQLite" }
    /// `sqlite`, OpenTelemetry's `db.system` for SQLite.
    public var telemetrySystem: String { "sqlite" }

    // MARK: Types and values

    /// `left IS NOT right`: NULL-safe, and false for an integer and a real that are equal.
    public func differs(_ left: String, _ right: String) -> String { "\(left) IS NOT \(right)" }

    /// ``typeName(_:)``: SQLite compares text by bytes unless told otherwise.
    public func columnTypeName(_ type: ColumnType) -> String { typeName(type) }

    /// Names chosen so that the type affinity is right (`DECIMAL_TEXT` keeps exact digits as text)
    /// and so the Depot type can be read back from the schema.
    public func typeName(_ type: ColumnType) -> String {
        switch type {
        case .bool: "BOOLEAN"
        case .integer: "INTEGER"
        case .double: "REAL"
        case .decimal: "DECIMAL_TEXT"
        case .text: "TEXT"
        case .blob: "BLOB"
        case .date: "DATE_REAL"
        case .uuid: "UUID_BLOB"
        case .url: "URL_TEXT"
        case .json: "JSON_TEXT"
        }
    }

    /// How SQLite's catalog spells `type`.
    public func catalogTypeName(_ type: ColumnType) -> String { typeName(type) }

    /// An empty set of values of `type`, for the right side of `IN`.
    public func emptySet(of type: ColumnType) -> String { "(SELECT NULL WHERE 0)" }

    /// The value as a SQLite literal, for `DEFAULT` clauses.
    public func literal(_ flag: Bool) -> String { flag ? "1" : "0" }

    /// Exact decimals are stored as text.
    public func literal(_ number: Decimal) -> String { "'\(number)'" }

    /// The value as a SQLite literal, for `DEFAULT` clauses.
    public func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    // MARK: Parameters

    /// The placeholder of parameter `index`, as SQLite numbers them.
    public func placeholder(_ index: Int) -> String { "?" }

    /// A placeholder naming parameter `index`, usable more than once.
    public func numberedPlaceholder(_ index: Int) -> String { "?\(index)" }

    // MARK: Reads

    /// Exact decimals compare by value through ``SQLFunctions/decimalCollation``; text compares
    /// by bytes already (SQLite's `BINARY`).
    public func operand(_ column: String, type: ColumnType?) -> String {
        type == .decimal ? "\(column) COLLATE \(SQLFunctions.decimalCollation)" : column
    }

    /// A JSON value compares as its canonical text: as it is bound.
    public func comparisonValue(_ placeholder: String, type: ColumnType?) -> String { placeholder }

    /// SQLite orders NULL first ascending and last descending already.
    public func ordering(_ subject: String, descending: Bool) -> String {
        descending ? "\(subject) DESC" : subject
    }

    /// Folded text `subject` ordered by its bytes.
    public func textOrdering(_ subject: String, descending: Bool) -> String {
        ordering(subject, descending: descending)
    }

    /// `OFFSET` with no `LIMIT`, on SQLite.
    public func offsetWithoutLimit(_ offset: String) -> String { " LIMIT -1 OFFSET " + offset }

    /// One writer at a time: nothing to lock.
    public func rowLock(_ lock: RowLock) -> String { "" }

    /// A JSON array read with `json_each(?)`.
    public func inLargeList(_ operand: String, _ values: [StoredValue], _ arguments: inout ArgumentList) -> String? {
        let integers = values.allSatisfy { if case .integer = $0 { true } else { false } }
        var list = "["
        list.reserveCapacity(values.count * 8)
        for (position, value) in values.enumerated() {
            if position > 0 { list += "," }
            switch value {
            case .integer(let number) where integers: list += String(number)
            case .text(let text) where !integers: list += Self.jsonString(text)
            default: return nil
            }
        }
        return "\(operand) IN (SELECT value FROM json_each(\(arguments.add(.text(list + "]")))))"
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    result +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// SQLite compares bytes (a blob): its text functions stop at the first U+0000, and bytes of
    /// UTF-8 match where characters do, as the in-memory store compares. An empty needle (an
    /// empty blob binds as NULL) is in every value (NULL stays unknown). `?` placeholders bind in
    /// order: each use gets a value of its own.
    public func textCondition(
        _ subject: String, _ op: TextOperator, _ pin: String, _ arguments: inout ArgumentList
    ) -> String {
        if pin.isEmpty { return "(\(subject) IS NOT NULL OR NULL)" }  // true, and unknown for NULL
        let bytes = "CAST(\(subject) AS BLOB)"
        let count = Int64(pin.utf8.count)
        switch op {
        case .contains:
            return "instr(\(bytes), \(arguments.add(.blob(Data(pin.utf8))))) > 0"
        // substr() of an empty blob is NULL, not an empty blob: the length test comes first, so an
        // empty value has no prefix or suffix but the empty one (NULL stays unknown).
        case .hasPrefix:
            let enough = arguments.add(.integer(count))
            let length = arguments.add(.integer(count))
            return
                "(length(\(bytes)) >= \(enough) AND substr(\(bytes), 1, \(length)) = \(arguments.add(.blob(Data(pin.utf8)))))"
        case .hasSuffix:
            let enough = arguments.add(.integer(count))
            let from = arguments.add(.integer(-count))
            return
                "(length(\(bytes)) >= \(enough) AND substr(\(bytes), \(from)) = \(arguments.add(.blob(Data(pin.utf8)))))"
        }
    }

    // MARK: Aggregates and updates

    /// Exact decimals (stored as text) group by value.
    public func groupOperand(_ column: String, type: ColumnType?) -> String { operand(column, type: type) }

    /// Integer sums and averages go through Depot's exact functions (``SQLFunctions/integerSum``,
    /// ``SQLFunctions/integerTotal``): SQLite's `SUM` fails on an intermediate overflow.
    public func aggregate(_ function: AggregateFunction, _ column: String, type: ColumnType?) -> String {
        switch (function, type) {
        case (.count, _):
            return "COUNT(\(column))"
        case (.sum, .decimal?):
            return "COALESCE(\(SQLFunctions.decimalSum)(\(column)), '0')"
        case (.sum, .double?):
            return "TOTAL(\(column))"
        case (.sum, _):
            return "COALESCE(\(SQLFunctions.integerSum)(\(column)), 0)"
        case (.average, .double?):
            // A NaN quotient would read as NULL, like an average of no values: 'NaN' tells them apart.
            return
                "(CASE WHEN COUNT(\(column)) = 0 THEN NULL ELSE COALESCE(TOTAL(\(column)) / COUNT(\(column)), 'NaN') END)"
        case (.average, _):
            // The exact sum, rounded once to a double, then divided: as every store computes it.
            return "(\(SQLFunctions.integerTotal)(\(column)) / NULLIF(COUNT(\(column)), 0))"
        case (.min, _), (.max, _):
            let name = function == .min ? "MIN" : "MAX"
            return type == .decimal
                ? "\(name)(\(column) COLLATE \(SQLFunctions.decimalCollation))" : "\(name)(\(column))"
        }
    }

    /// Exact decimals (text) compare by value only with the collation written next to the operand.
    public func comparableAggregate(_ expression: String, type: ColumnType?) -> String {
        type == .decimal ? "(\(expression)) COLLATE \(SQLFunctions.decimalCollation)" : expression
    }

    /// The value an `UPDATE … SET` assigns from `placeholder`.
    public func assigned(_ placeholder: String, type: ColumnType) -> String { placeholder }

    /// Through ``SQLFunctions/add``, which reports an overflow as PostgreSQL does.
    public func adding(_ source: String, _ addend: String) -> String { "\(SQLFunctions.add)(\(source), \(addend))" }

    // MARK: Transactions

    /// `BEGIN IMMEDIATE`: the database's write lock is taken now, so the transaction cannot fail
    /// to upgrade later.
    public var beginWrite: String { "BEGIN IMMEDIATE" }

    /// Reader connections refuse a statement that writes before it runs.
    public var beginReadOnly: String? { nil }

    /// ``beginWrite`` holds the database's only write lock already.
    public func advisoryLock(_ key: Int) -> String? { nil }

    /// SQLite's procedure for rebuilding a table suspends foreign keys for its transaction.
    public var foreignKeySuspension: SQLRenderer.ForeignKeySuspension? {
        SQLRenderer.ForeignKeySuspension(
            enforced: SQLStatement(sql: "PRAGMA foreign_keys"), suspend: SQLStatement(sql: "PRAGMA foreign_keys = OFF"),
            danglingReferences: SQLStatement(sql: "SELECT count(*) FROM pragma_foreign_key_check"),
            resume: SQLStatement(sql: "PRAGMA foreign_keys = ON"))
    }

    // MARK: Catalog

    /// The columns of `table`, as SQLite's catalog lists them.
    public func catalogColumns(of table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT name, type, \"notnull\", pk, dflt_value FROM pragma_table_info(?) ORDER BY cid",
            arguments: [.text(table)])
    }

    /// The tables of the current schema, as SQLite's catalog lists them.
    public var catalogTables: SQLStatement {
        SQLStatement(
            sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    }

    /// The indexes of `table` created by `CREATE INDEX`, as SQLite's catalog lists them.
    public func catalogIndexes(of table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin = 'c' ORDER BY name",
            arguments: [.text(table)])
    }

    /// The columns of index `index`, in index order.
    public func catalogIndexColumns(of index: String) -> SQLStatement {
        SQLStatement(sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [.text(index)])
    }

    /// Whether table `table` exists: one row holding `1` or `0`.
    public func catalogTableExists(_ table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [.text(table)])
    }

    /// Tables have no schema.
    public var currentSchema: SQLStatement? { nil }

    // MARK: Migrations

    /// What `DROP TABLE` adds on SQLite.
    public var dropTableCascade: String { "" }

    /// `ALTER TABLE` cannot change a column's type: the table is rebuilt (see
    /// `SQLMigrator.rebuildSQLiteTable`).
    public func alterColumn(_ column: TableDescription.ColumnDescription, in table: String, fromText: Bool)
        -> [String]?
    { nil }

    // MARK: Change detection

    /// A count that changes whenever another connection commits to the database.
    public static let dataVersion = SQLStatement(sql: "PRAGMA data_version")

    /// No Depot kept folded copies on SQLite.
    public func dropLegacyFoldedCopy(of column: String, in table: String) -> String? { nil }
}
