/// What a transaction wrote, as its commit announces it: the tables, and for each table whose
/// every write named its rows by key (a batch of rows, a delete or update of keys), those keys.
/// Every store's writer keeps one, so a commit says the same on each.
package struct WrittenRows: Sendable {
    /// The tables written.
    package private(set) var tables: Set<String> = []
    private var keys: [String: Set<[StoredValue]>] = [:]
    /// Tables written in rows not all known by key.
    private var unkeyed: Set<String> = []

    package init() {}

    /// `table` was written, in any of its rows.
    package mutating func wrote(_ table: String) {
        tables.insert(table)
        unkeyed.insert(table)
        keys[table] = nil
    }

    /// The rows of `rows` were written into `table` (`keyPositions`: where its key columns are).
    package mutating func wrote(_ rows: RowBatch, into table: TableDescription, keyPositions: [Int]) {
        let name = table.name
        guard !unkeyed.contains(name), keys[name, default: []].count + rows.count <= StoreCommit.keyLimit,
            !keyPositions.isEmpty
        else { return wrote(name) }
        tables.insert(name)
        var written = keys[name, default: []]
        let width = rows.columns.count
        for row in 0..<rows.count {
            written.insert(keyPositions.map { rows.values[row * width + $0] })
        }
        keys[name] = written
    }

    /// The rows of `table` matching `predicate` were written (updated or deleted): by key when
    /// the predicate names every row it can match by its key, else any row.
    package mutating func wrote(_ table: TableDescription, where predicate: PredicateNode?) {
        let name = table.name
        guard !unkeyed.contains(name), let named = predicate?.keys(of: table),
            keys[name, default: []].count + named.count <= StoreCommit.keyLimit
        else { return wrote(name) }
        tables.insert(name)
        keys[name, default: []].formUnion(named)
    }

    /// The rows `update` matched were updated: by key as for ``wrote(_:where:)``, unless it
    /// assigns a key column (a row then takes a key no one named).
    package mutating func wrote(_ update: UpdateQuery) {
        let key = update.table.primaryKey
        guard !update.assignments.contains(where: { key.contains($0.column) }) else {
            return wrote(update.table.name)
        }
        wrote(update.table, where: update.predicate)
    }

    /// The commit's announcement; with `anything`, a hand-written statement ran and every table
    /// may have changed.
    package func commit(anything: Bool = false) -> StoreCommit {
        let commit = StoreCommit(tables: tables, changedKeys: keys)
        guard anything else { return commit }
        var all = StoreCommit.anythingMayHaveChanged.adding(tables)
        all.changedKeys = [:]
        return all
    }
}

extension PredicateNode {
    /// The keys (values in `table`'s primary-key order) of every row this predicate can match,
    /// when it names them: key equalities, a key `IN` list, or conditions joined so that each
    /// row must match one of those (`AND` with one, `OR` of them). `nil` when a row of another
    /// key might match.
    ///
    /// ```swift
    /// PredicateNode.isIn(column: "icao", [.text("ENGM"), .text("ESSA")]).keys(of: airports)
    /// // [[.text("ENGM")], [.text("ESSA")]]
    /// ```
    package func keys(of table: TableDescription) -> Set<[StoredValue]>? {
        let key = table.primaryKey
        guard !key.isEmpty else { return nil }
        switch self {
        case .compare(let column, .equal, let value) where key == [column]:
            return [[value]]
        case .isIn(let column, let values) where key == [column]:
            return Set(values.map { [$0] })
        case .constant(false):
            return []
        case .or(let nodes):
            var all: Set<[StoredValue]> = []
            for node in nodes {
                guard let keys = node.keys(of: table) else { return nil }
                all.formUnion(keys)
            }
            return all
        case .and(let nodes):
            // Equalities on every key column name one row.
            var bound: [String: StoredValue] = [:]
            for case .compare(let column, .equal, let value) in nodes where key.contains(column) {
                bound[column] = value
            }
            let row = key.compactMap { bound[$0] }
            if row.count == key.count { return [row] }
            return nodes.compactMap { $0.keys(of: table) }.min { $0.count < $1.count }
        default:
            return nil
        }
    }
}
