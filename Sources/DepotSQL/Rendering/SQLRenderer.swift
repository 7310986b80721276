import Depot
import Foundation

/// Renders store descriptions (queries, writes, tables) as SQL for one dialect.
///
/// The one place Depot writes SQL. Values always travel as bound parameters; identifiers come
/// from validated schemas and are quoted.
///
/// ```swift
/// let query = SelectQuery(table: Airport.schema.table, predicate: (\Airport.country == "NO").node)
/// SQLRenderer(dialect: .sqlite).select(query).sql
/// // SELECT "icao", "name", … FROM "airports" WHERE "country" = ? ORDER BY "icao"
/// SQLRenderer(dialect: .postgres).select(query).sql
/// // SELECT "icao", "name", … FROM "airports" WHERE "country" COLLATE "C" = $1
/// //     ORDER BY "icao" COLLATE "C" ASC NULLS FIRST
/// ```
public struct SQLRenderer: Sendable {
    /// The SQL flavour every statement is rendered in.
    public let dialect: any SQLDialect

    /// A renderer for `dialect`.
    public init(dialect: any SQLDialect) {
        self.dialect = dialect
    }

    func quote(_ identifier: String) -> String { dialect.quote(identifier) }

    // MARK: - Tables

    /// `CREATE TABLE IF NOT EXISTS` for `table`, with NOT NULL and the primary key.
    public func createTable(_ table: TableDescription) -> String {
        var parts = table.columns.map { column in
            quote(column.name) + " " + dialect.columnTypeName(column.type) + (column.isNullable ? "" : " NOT NULL")
        }
        parts.append("PRIMARY KEY (" + table.primaryKey.map(quote).joined(separator: ", ") + ")")
        return "CREATE TABLE IF NOT EXISTS \(quote(table.name)) (" + parts.joined(separator: ", ") + ")"
    }

    /// `CREATE [UNIQUE] INDEX` for `index` (`IF NOT EXISTS` when `ifNotExists`).
    public func createIndex(_ index: IndexDescription, ifNotExists: Bool = false) -> String {
        "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\(quote(index.name)) ON "
            + "\(quote(index.table)) (" + index.columns.map(quote).joined(separator: ", ") + ")"
    }

    /// The statements that create `table` with its declared indexes (each `IF NOT EXISTS`).
    public func createTableWithIndexes(_ table: TableDescription) -> [String] {
        [createTable(table)] + table.indexes.map { createIndex($0, ifNotExists: true) }
    }

    // MARK: - Reads

    /// The `SELECT` of every column of the table, in schema order, for `query` (or of its
    /// `SelectQuery.columns`, in their order).
    public func select(_ query: SelectQuery) -> SQLStatement {
        var builder = ArgumentList(dialect: dialect)
        let columns = query.table.columns.map { quote($0.name) }.joined(separator: ", ")
        let returned = query.columns.map { $0.map(quote).joined(separator: ", ") } ?? columns
        var source = quote(query.table.name)
        // Arguments bind in the order their placeholders appear (SQLite's `?`): the window's
        // order comes before the filter in the text, so it is rendered first.
        let windowOrder = query.limitPerGroup.map { _ in
            query.ordering.map { render($0, query.table, &builder) }.joined(separator: ", ")
        }
        var filter = ""
        if let predicate = query.predicate {
            filter = " WHERE " + render(predicate, query.table, &builder)
        }
        if let group = query.limitPerGroup, let order = windowOrder {
            // Rows numbered within each group in the query's order; the outer query keeps the first.
            source =
                "(SELECT \(columns), ROW_NUMBER() OVER (PARTITION BY \(quote(group.column)) ORDER BY \(order)) "
                + "AS depot_rank FROM \(source)\(filter)) AS grouped"
            filter = " WHERE depot_rank <= " + builder.add(.integer(Int64(group.limit)))
        }
        var sql = "SELECT \(returned) FROM \(source)\(filter)"
        if !query.ordering.isEmpty {
            sql += " ORDER BY " + query.ordering.map { render($0, query.table, &builder) }.joined(separator: ", ")
        }
        sql += limitClause(limit: query.limit, offset: query.offset, &builder)
        if let lock = query.lock, query.limitPerGroup == nil { sql += dialect.rowLock(lock) }
        return SQLStatement(sql: sql, arguments: builder.values)
    }

    /// The `SELECT COUNT(*)` of the rows `query` returns.
    public func count(_ query: SelectQuery) -> SQLStatement {
        if query.limitPerGroup != nil {
            let rows = select(query)
            return SQLStatement(sql: "SELECT COUNT(*) FROM (\(rows.sql)) AS counted", arguments: rows.arguments)
        }
        var builder = ArgumentList(dialect: dialect)
        if query.limit == nil && (query.offset ?? 0) == 0,
            case .matches(let column, let tokens, let matching)? = query.predicate,
            let counted = dialect.searchCount(column, tokens, matching, query.table, &builder)
        {
            return SQLStatement(sql: counted, arguments: builder.values)
        }
        var filter = ""
        if let predicate = query.predicate {
            filter = " WHERE " + render(predicate, query.table, &builder)
        }
        if query.limit == nil && (query.offset ?? 0) == 0 {
            return SQLStatement(
                sql: "SELECT COUNT(*) FROM \(quote(query.table.name))" + filter, arguments: builder.values)
        }
        let inner =
            "SELECT 1 FROM \(quote(query.table.name))" + filter
            + limitClause(limit: query.limit, offset: query.offset, &builder)
        return SQLStatement(sql: "SELECT COUNT(*) FROM (\(inner)) AS counted", arguments: builder.values)
    }

    /// `LIMIT` and `OFFSET`, bound rather than written into the text: a statement per distinct
    /// page would fill the engines' statement caches (one entry per value an API client sends).
    func limitClause(limit: Int?, offset: Int?, _ builder: inout ArgumentList) -> String {
        switch (limit, offset) {
        case (nil, nil), (nil, 0?): return ""
        case (let limit?, nil), (let limit?, 0?): return " LIMIT " + builder.add(.integer(Int64(limit)))
        case (let limit?, let offset?):
            let limit = builder.add(.integer(Int64(limit)))
            return " LIMIT \(limit) OFFSET " + builder.add(.integer(Int64(offset)))
        case (nil, let offset?): return dialect.offsetWithoutLimit(builder.add(.integer(Int64(offset))))
        }
    }

    // MARK: - Writes

    /// The one-row `INSERT` (or upsert) reused for every row of a batch with these columns.
    ///
    /// Upsert updates the batch's non-key columns on a key conflict and leaves the others.
    public func insert(into table: TableDescription, columns: [String], mode: WriteMode) -> String {
        if mode == .update { return update(table, columns: columns) }
        var sql =
            "INSERT INTO \(quote(table.name)) (" + columns.map(quote).joined(separator: ", ") + ") VALUES ("
            + (1...max(columns.count, 1)).map { placeholder($0) }.joined(separator: ", ") + ")"
        if mode == .upsert {
            let keys = table.primaryKey.map(quote).joined(separator: ", ")
            let updates = columns.filter { !table.primaryKey.contains($0) }
            if updates.isEmpty {
                sql += " ON CONFLICT (\(keys)) DO NOTHING"
            } else {
                sql +=
                    " ON CONFLICT (\(keys)) DO UPDATE SET "
                    + updates.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
                    + dialect.unchangedRowsSkipped(in: table, columns: updates)
            }
        }
        return sql
    }

    /// The one-row `UPDATE` of the batch's non-key columns, by key; parameters are numbered in
    /// the batch's column order, so rows bind as they are.
    func update(_ table: TableDescription, columns: [String]) -> String {
        func numbered(_ name: String) -> String {
            let position = (columns.firstIndex(of: name) ?? 0) + 1
            return dialect.numberedPlaceholder(position)
        }
        let assigned = columns.filter { !table.primaryKey.contains($0) }
        let sets = assigned.map { "\(quote($0)) = \(numbered($0))" }.joined(separator: ", ")
        let keys = table.primaryKey.map { "\(quote($0)) = \(numbered($0))" }.joined(separator: " AND ")
        // A row that holds the values already is left alone, and not counted.
        let changed = assigned.map { dialect.differs(quote($0), numbered($0)) }.joined(separator: " OR ")
        return "UPDATE \(quote(table.name)) SET \(sets) WHERE \(keys)" + (assigned.isEmpty ? "" : " AND (\(changed))")
    }

    /// The `DELETE` of the rows matching `predicate` (all rows when `nil`).
    public func delete(from table: TableDescription, where predicate: PredicateNode?) -> SQLStatement {
        var builder = ArgumentList(dialect: dialect)
        var sql = "DELETE FROM \(quote(table.name))"
        if let predicate {
            sql += " WHERE " + render(predicate, table, &builder)
        }
        return SQLStatement(sql: sql, arguments: builder.values)
    }

    func placeholder(_ index: Int) -> String { dialect.placeholder(index) }

    // MARK: - Predicates

    /// Renders a predicate tree; values are appended to `arguments`.
    public func render(_ node: PredicateNode, _ table: TableDescription, _ arguments: inout ArgumentList) -> String {
        switch node {
        case .constant(let value):
            return value ? "1 = 1" : "1 = 0"
        case .compare(let column, let op, let value):
            return "\(operand(column, table)) \(op.rawValue) \(bound(value, column, table, &arguments))"
        case .isNull(let column):
            return "\(quote(column)) IS NULL"
        case .isNotNull(let column):
            return "\(quote(column)) IS NOT NULL"
        case .isIn(let column, let values):
            if values.isEmpty { return "1 = 0" }
            let isJSON = table.columns.first { $0.name == column }?.type == .json
            if values.count > Self.largeListThreshold, !isJSON,
                let list = dialect.inLargeList(operand(column, table), values, &arguments)
            {
                return list
            }
            return "\(operand(column, table)) IN ("
                + values.map { bound($0, column, table, &arguments) }.joined(separator: ", ") + ")"
        case .text(let column, let op, let needle, let matching):
            return renderText(column, op, needle, matching: matching, &arguments)
        case .and(let nodes):
            return joined(nodes, "AND", table, &arguments, render)
        case .or(let nodes):
            return joined(nodes, "OR", table, &arguments, render)
        case .not(let inner):
            return "NOT (" + render(inner, table, &arguments) + ")"
        case .withinDistance(let latitude, let longitude, let center, let kilometers):
            return renderWithin(latitude, longitude, center, kilometers, &arguments)
        case .matches(let column, let tokens, let matching):
            return renderMatches(column, tokens, matching, table, &arguments)
        case .isInSubquery(let column, let subquery):
            let selected = quote(subquery.column)
            var filter = "\(selected) IS NOT NULL"
            if let predicate = subquery.predicate {
                filter += " AND (" + render(predicate, subquery.table, &arguments) + ")"
            }
            return
                "\(operand(column, table)) IN (SELECT \(selected) FROM \(quote(subquery.table.name)) WHERE \(filter))"
        }
    }

    /// Lists longer than this bind as one array parameter, not one parameter per value: engines
    /// cap the number of parameters (SQLite at 32,766 by default, PostgreSQL at 65,535).
    public static let largeListThreshold = 100

    /// A column as a comparison operand: byte-order text, exact decimals.
    /// `value` bound for a comparison with `column`: a JSON value compares as `jsonb` on
    /// PostgreSQL (the column's type; bound as its text), as its canonical text elsewhere.
    func bound(_ value: StoredValue, _ column: String, _ table: TableDescription, _ arguments: inout ArgumentList)
        -> String
    {
        let placeholder = arguments.add(value)
        guard !value.isNull else { return placeholder }
        return dialect.comparisonValue(placeholder, type: table.columns.first { $0.name == column }?.type)
    }

    func operand(_ column: String, _ table: TableDescription) -> String {
        dialect.operand(quote(column), type: table.columns.first { $0.name == column }?.type)
    }

    private func renderText(
        _ column: String, _ op: TextOperator, _ needle: String, matching: TextMatching,
        _ arguments: inout ArgumentList
    ) -> String {
        dialect.textCondition(folded(quote(column), matching), op, matching.apply(needle), &arguments)
    }

    /// A bounding box over the two columns (an index on the latitude serves its range), the
    /// valid ranges, then the exact distance with the function every store shares.
    private func renderWithin(
        _ latitude: String, _ longitude: String, _ center: Coordinate, _ kilometers: Double,
        _ arguments: inout ArgumentList
    ) -> String {
        guard let box = BoundingBox(around: center, kilometers: kilometers) else { return "1 = 0" }
        let lat = quote(latitude)
        let lon = quote(longitude)
        let south = arguments.add(.double(Swift.max(box.latitude.lowerBound, -90)))
        let north = arguments.add(.double(Swift.min(box.latitude.upperBound, 90)))
        var parts = ["\(lat) BETWEEN \(south) AND \(north)"]
        if box.longitudes.isEmpty {
            parts.append("\(lon) BETWEEN \(arguments.add(.double(-180))) AND \(arguments.add(.double(180)))")
        } else {
            let ranges = box.longitudes.map { range in
                "\(lon) BETWEEN \(arguments.add(.double(range.lowerBound))) AND \(arguments.add(.double(range.upperBound)))"
            }
            parts.append(ranges.count == 1 ? ranges[0] : "(" + ranges.joined(separator: " OR ") + ")")
        }
        let from = "\(arguments.add(.double(center.latitude))), \(arguments.add(.double(center.longitude)))"
        parts.append("\(SQLFunctions.distance)(\(from), \(lat), \(lon)) <= \(arguments.add(.double(kilometers)))")
        return parts.joined(separator: " AND ")
    }

    /// `expression` as `matching` compares it: itself, `depot_fold(…)` or `depot_fold_diacritics(…)`.
    func folded(_ expression: String, _ matching: TextMatching) -> String {
        switch matching {
        case .caseSensitive: expression
        case .caseInsensitive: "\(SQLFunctions.fold)(\(expression))"
        case .caseAndDiacriticInsensitive: "\(SQLFunctions.foldDiacritics)(\(expression))"
        }
    }

    // MARK: - Order

    private func render(_ term: OrderTerm, _ table: TableDescription, _ arguments: inout ArgumentList) -> String {
        switch term {
        case .column(let name, let descending):
            // A column that cannot hold NULL needs no NULLS clause, and without one an index in its
            // default order (a primary key's) serves the order on PostgreSQL: with `ASC NULLS
            // FIRST` even a page of the first 20 rows sorted the whole table.
            if let column = table.columns.first(where: { $0.name == name }), !column.isNullable {
                let subject = operand(name, table)
                return descending ? "\(subject) DESC" : subject
            }
            return dialect.ordering(operand(name, table), descending: descending)
        case .relevance(let name, let tokens, let matching):
            return renderRelevance(name, tokens, matching, table, &arguments)
        case .text(let name, let descending, let matching):
            return dialect.textOrdering(folded(quote(name), matching), descending: descending)
        case .distance(let latitude, let longitude, let point):
            let lat = arguments.add(.double(point.latitude))
            let lon = arguments.add(.double(point.longitude))
            return "\(SQLFunctions.distance)(\(lat), \(lon), \(quote(latitude)), \(quote(longitude))) NULLS LAST"
        }
    }
}

/// The values bound so far while rendering, and their placeholders.
public struct ArgumentList: Sendable {
    let dialect: any SQLDialect
    /// The bound values, in placeholder order.
    public private(set) var values: [StoredValue] = []

    /// An empty list, numbering placeholders as `dialect` does.
    public init(dialect: any SQLDialect) { self.dialect = dialect }

    /// Binds `value` and returns its placeholder.
    mutating func add(_ value: StoredValue) -> String {
        values.append(value)
        return dialect.placeholder(values.count)
    }
}
