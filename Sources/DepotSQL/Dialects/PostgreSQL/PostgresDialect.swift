import Depot
import Foundation

/// PostgreSQL 13 or later. Folding and distance use the functions Depot installs in the store's
/// schema (``SQLFunctions``, ``PostgresDialect/setup(schema:)``).
public struct PostgresDialect: SQLDialect {
    /// PostgreSQL's dialect.
    public init() {}

    /// The key of PostgreSQL's text in hand-written SQL: `postgres`.
    public var name: String { "postgres" }
    /// `PostgreSQL`, as messages name the engine.
    public var displayName: String { "PostgreSQL" }
    /// `postgresql`, OpenTelemetry's `db.system` for PostgreSQL.
    public var telemetrySystem: String { "postgresql" }

    // MARK: Types and values

    /// `left IS DISTINCT FROM right`: NULL-safe.
    public func differs(_ left: String, _ right: String) -> String { "\(left) IS DISTINCT FROM \(right)" }

    /// The declared column type PostgreSQL stores `type` in.
    public func typeName(_ type: ColumnType) -> String {
        switch type {
        case .bool: "boolean"
        case .integer: "bigint"
        case .double: "double precision"
        case .decimal: "numeric"
        case .text: "text"
        case .blob: "bytea"
        case .date: "timestamptz"
        case .uuid: "uuid"
        case .url: "text"
        case .json: "jsonb"
        }
    }

    /// Text columns (URLs too) are declared `COLLATE "C"`: Depot compares and orders text by bytes
    /// (`text COLLATE "C"`), and an index serves only comparisons in its column's collation — on
    /// a column of the database's default collation, even a primary-key lookup would scan.
    public func columnTypeName(_ type: ColumnType) -> String {
        type == .text || type == .url ? typeName(type) + " COLLATE \"C\"" : typeName(type)
    }

    /// `information_schema` says `timestamp with time zone` for `timestamptz`.
    public func catalogTypeName(_ type: ColumnType) -> String {
        type == .date ? "timestamp with time zone" : typeName(type)
    }

    /// PostgreSQL has no empty list, and needs the type.
    public func emptySet(of type: ColumnType) -> String {
        "(SELECT CAST(NULL AS \(typeName(type))) WHERE FALSE)"
    }

    /// The value as a PostgreSQL literal, for `DEFAULT` clauses.
    public func literal(_ flag: Bool) -> String { flag ? "true" : "false" }

    /// The value as a PostgreSQL literal, for `DEFAULT` clauses.
    public func literal(_ number: Decimal) -> String { "\(number)" }

    /// An escape string: it means the same whatever `standard_conforming_strings` says (a plain
    /// literal's backslashes are escapes when it is off).
    public func literal(_ text: String) -> String {
        "E'"
            + text.replacingOccurrences(of: "'", with: "''").replacingOccurrences(of: "\\", with: "\\\\") + "'"
    }

    // MARK: Parameters

    /// The placeholder of parameter `index`, as PostgreSQL numbers them.
    public func placeholder(_ index: Int) -> String { "$\(index)" }

    /// A placeholder naming parameter `index`, usable more than once.
    public func numberedPlaceholder(_ index: Int) -> String { "$\(index)" }

    // MARK: Reads

    /// Text compares by bytes (`COLLATE "C"`), as every store does.
    public func operand(_ column: String, type: ColumnType?) -> String {
        type == .text || type == .url ? "\(column) COLLATE \"C\"" : column
    }

    /// A JSON value compares as `jsonb` (the column's type; bound as its text).
    public func comparisonValue(_ placeholder: String, type: ColumnType?) -> String {
        type == .json ? "CAST(\(placeholder) AS jsonb)" : placeholder
    }

    /// PostgreSQL orders NULL last ascending: said explicitly, as every store orders.
    public func ordering(_ subject: String, descending: Bool) -> String {
        descending ? "\(subject) DESC NULLS LAST" : "\(subject) ASC NULLS FIRST"
    }

    /// Folded text `subject` ordered by its bytes.
    public func textOrdering(_ subject: String, descending: Bool) -> String {
        ordering("\(subject) COLLATE \"C\"", descending: descending)
    }

    /// `OFFSET` with no `LIMIT`, on PostgreSQL.
    public func offsetWithoutLimit(_ offset: String) -> String { " OFFSET " + offset }

    /// The clause locking the rows a `SELECT` reads, on PostgreSQL.
    public func rowLock(_ lock: RowLock) -> String {
        switch lock {
        case .referenced: " FOR KEY SHARE"
        case .updated: " FOR NO KEY UPDATE"
        case .removed: " FOR UPDATE"
        }
    }

    /// An array literal cast to `text[]` or `bigint[]`, unnested. Not `= ANY(array)`: PostgreSQL
    /// compares each row with the array's elements one by one (100,000 keys over 14,000 rows:
    /// 80 s); a set-returning subquery is hashed (60 ms).
    public func inLargeList(_ operand: String, _ values: [StoredValue], _ arguments: inout ArgumentList) -> String? {
        let integers = values.allSatisfy { if case .integer = $0 { true } else { false } }
        var list = "{"
        list.reserveCapacity(values.count * 8)
        for (position, value) in values.enumerated() {
            if position > 0 { list += "," }
            switch value {
            case .integer(let number) where integers: list += String(number)
            case .text(let text) where !integers: list += Self.arrayElement(text)
            default: return nil
            }
        }
        let array = "CAST(\(arguments.add(.text(list + "}"))) AS \(integers ? "bigint" : "text")[])"
        return "\(operand) IN (SELECT unnest(\(array)))"
    }

    /// `text` as a double-quoted element of a PostgreSQL array literal.
    static func arrayElement(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { result += "\\" }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }

    /// The condition that `subject` contains, starts or ends with `pin`.
    public func textCondition(
        _ subject: String, _ op: TextOperator, _ pin: String, _ arguments: inout ArgumentList
    ) -> String {
        switch op {
        case .contains:
            return "strpos(\(subject), \(arguments.add(.text(pin)))) > 0"
        case .hasPrefix:
            return "starts_with(\(subject), \(arguments.add(.text(pin))))"
        case .hasSuffix:
            let value = arguments.add(.text(pin))
            return "right(\(subject), length(\(value))) = \(arguments.add(.text(pin)))"
        }
    }

    // MARK: Aggregates and updates

    /// A grouping column on PostgreSQL.
    public func groupOperand(_ column: String, type: ColumnType?) -> String { column }

    /// Integer sums come back as `numeric` (the store narrows them); averages of integers divide
    /// the exact sum rounded once to a double, so they never overflow.
    public func aggregate(_ function: AggregateFunction, _ column: String, type: ColumnType?) -> String {
        switch (function, type) {
        case (.count, _):
            return "COUNT(\(column))"
        case (.sum, _):
            return "COALESCE(SUM(\(column)), 0)"
        case (.average, .double?):
            return "(SUM(\(column)) / NULLIF(COUNT(\(column)), 0))"
        case (.average, _):
            return "(CAST(SUM(\(column)) AS double precision) / NULLIF(COUNT(\(column)), 0))"
        case (.min, _), (.max, _):
            let name = function == .min ? "MIN" : "MAX"
            switch type {
            case .text?, .url?: return "\(name)(\(column) COLLATE \"C\")"
            // PostgreSQL has no MIN of uuid; the text of a uuid orders as its bytes do.
            case .uuid?: return "CAST(\(name)(CAST(\(column) AS text) COLLATE \"C\") AS uuid)"
            default: return "\(name)(\(column))"
            }
        }
    }

    /// An aggregate where it is compared or ordered on PostgreSQL.
    public func comparableAggregate(_ expression: String, type: ColumnType?) -> String { expression }

    /// Cast to the column's type (a parameter's type is otherwise inferred, and text is not jsonb).
    public func assigned(_ placeholder: String, type: ColumnType) -> String {
        "CAST(\(placeholder) AS \(typeName(type)))"
    }

    /// `source + addend` on PostgreSQL.
    public func adding(_ source: String, _ addend: String) -> String { "\(source) + \(addend)" }

    // MARK: Transactions

    /// Begins a transaction that writes, on PostgreSQL.
    public var beginWrite: String { "BEGIN" }

    /// Ended by `ROLLBACK`.
    public var beginReadOnly: String? { "BEGIN READ ONLY" }

    /// A transaction-scoped advisory lock of the current schema: `key` and a hash of the schema's
    /// name, so stores in different schemas of one database never wait for each other's
    /// migrations or table creation (a database-wide key made every test schema of a CI run queue
    /// behind the others', 40–60 s per lock under load).
    public func advisoryLock(_ key: Int) -> String? {
        "SELECT pg_advisory_xact_lock(\(key), hashtext(coalesce(current_schema(), '')))"
    }

    /// PostgreSQL rebuilds no table and always enforces foreign keys.
    public var foreignKeySuspension: SQLRenderer.ForeignKeySuspension? { nil }

    // MARK: Catalog

    /// The columns of `table`, as PostgreSQL's catalog lists them.
    public func catalogColumns(of table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT c.column_name::text, c.data_type::text, "
                + "CASE WHEN c.is_nullable = 'NO' THEN '1' ELSE '0' END, "
                // indkey is an int2vector: as an array its positions start at 0.
                + "COALESCE(array_position(i.indkey::int2[], c.ordinal_position::int::int2) "
                + "- array_lower(i.indkey::int2[], 1) + 1, 0)::text, "
                + "c.column_default::text FROM information_schema.columns c "
                + "LEFT JOIN pg_index i ON i.indisprimary AND i.indrelid = \(Self.regclass(1)) "
                + "WHERE c.table_schema = current_schema() AND c.table_name::text = $1::text "
                + "ORDER BY c.ordinal_position",
            arguments: [.text(table)])
    }

    /// The text columns of `table` in the current schema whose collation is not `"C"` (tables made
    /// before Depot declared it, or by hand).
    public static func textColumnsWithoutByteCollation(of table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() "
                + "AND table_name::text = $1::text AND data_type = 'text' "
                + "AND collation_name IS DISTINCT FROM 'C' ORDER BY ordinal_position",
            arguments: [.text(table)])
    }

    /// The tables of the current schema, as PostgreSQL's catalog lists them.
    public var catalogTables: SQLStatement {
        SQLStatement(
            sql: "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
    }

    /// The indexes of `table` created by `CREATE INDEX`, as PostgreSQL's catalog lists them.
    public func catalogIndexes(of table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT c.relname::text, CASE WHEN i.indisunique THEN '1' ELSE '0' END FROM pg_index i "
                + "JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisprimary AND i.indrelid = "
                + "\(Self.regclass(1)) ORDER BY c.relname", arguments: [.text(table)])
    }

    /// The columns of index `index`, in index order.
    public func catalogIndexColumns(of index: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT a.attname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                + "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                + "WHERE c.relname = $1 AND c.relnamespace = to_regnamespace(current_schema()) "
                + "ORDER BY array_position(i.indkey::int2[], a.attnum)", arguments: [.text(index)])
    }

    /// Whether table `table` exists: one row holding `1` or `0`.
    public func catalogTableExists(_ table: String) -> SQLStatement {
        SQLStatement(
            sql: "SELECT count(*)::text FROM information_schema.tables WHERE table_schema = current_schema() "
                + "AND table_name = $1", arguments: [.text(table)])
    }

    /// The table named by parameter `index`, in the current schema, as a `regclass`.
    static func regclass(_ index: Int) -> String {
        "to_regclass(quote_ident(current_schema()) || '.' || quote_ident($\(index)::text))"
    }

    /// The query of the schema tables are created in.
    public var currentSchema: SQLStatement? { Self.currentSchemaQuery }

    /// The connection's current schema, where its tables live.
    public static let currentSchemaQuery = SQLStatement(sql: "SELECT current_schema()::text")

    // MARK: Migrations

    /// Triggers and their functions depend on the table.
    public var dropTableCascade: String { " CASCADE" }

    /// The type through `USING` (text spelling a whole number with a fraction or an exponent,
    /// `'12.0'`, `'1e3'`, goes through double precision, as on SQLite and in memory: `bigint`
    /// alone refuses it), then the nullability.
    public func alterColumn(_ column: TableDescription.ColumnDescription, in table: String, fromText: Bool)
        -> [String]?
    {
        let type = typeName(column.type)
        let name = quote(column.name)
        let using =
            column.type == .integer && fromText
            ? "CASE WHEN \(name) ~ '[.eE]' THEN CAST(CAST(\(name) AS double precision) AS \(type)) "
                + "ELSE CAST(\(name) AS \(type)) END"
            : "\(name)::\(type)"
        return [
            "ALTER TABLE \(quote(table)) ALTER COLUMN \(name) TYPE \(columnTypeName(column.type)) USING \(using)",
            "ALTER TABLE \(quote(table)) ALTER COLUMN \(name) \(column.isNullable ? "DROP" : "SET") NOT NULL",
        ]
    }

    /// The statement that drops an earlier Depot's folded copy of `column`.
    public func dropLegacyFoldedCopy(of column: String, in table: String) -> String? {
        "ALTER TABLE \(quote(table)) DROP COLUMN IF EXISTS \(quote(SQLNames.legacyFoldedColumn(column)))"
    }
}
