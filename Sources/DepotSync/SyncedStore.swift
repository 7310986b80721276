import Depot
import Foundation

/// The store an app writes through when some of its entities sync: the ordinary `Store` API,
/// with every write to a synced entity's table recorded in the outbox in the same transaction.
///
/// Get it from ``SyncEngine/store``. Reads pass straight through; writes to tables that do not sync
/// too. What the outbox records is what changed: for each row written, the columns whose stored
/// value differs afterwards (a write that changes nothing records nothing), the whole row as it
/// was before (the base of a three-way merge), and for a removal, a delete.
///
/// ```swift
/// let airports = engine.store.repository(Airport.self)
/// try await airports.update(where: \.icao == "ENGM", set: [.set(\.name, to: "Oslo Gardermoen")])
/// // one transaction: UPDATE "airports" … ; INSERT INTO "depot_sync_outbox" … -- {"name": …}
/// ```
///
/// It runs no hand-written SQL (DepotSQL's `sql`): the outbox would miss what a statement writes.
/// Read with SQL through ``base`` when it is a SQL store; write through repositories.
public final class SyncedStore: Store {
    /// The store underneath (writes through it are not recorded).
    public let base: any Store
    let synced: Set<String>
    let clock: @Sendable () -> Date

    init(base: any Store, synced: Set<String>, clock: @escaping @Sendable () -> Date) {
        self.base = base
        self.synced = synced
        self.clock = clock
    }

    /// Runs `body` in one transaction of the base store; writes to synced tables through it are
    /// recorded in the outbox in that same transaction.
    public func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await base.transaction { writer in
            try await body(RecordingWriter(base: writer, synced: synced, clock: clock))
        }
    }

    /// The base store's commit announcements.
    public func commits() -> AsyncStream<StoreCommit> { base.commits() }

    /// Reads from the base store.
    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    /// Counts in the base store.
    public func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    /// Aggregates in the base store.
    public func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try await base.aggregate(query)
    }
}

/// A transaction's writer that records changes to synced tables in the outbox.
struct RecordingWriter: StoreWriter {
    let base: any StoreWriter
    let synced: Set<String>
    let clock: @Sendable () -> Date

    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        guard synced.contains(table.name), rows.count > 0 else {
            return try await base.write(rows, into: table, mode: mode)
        }
        let keyPositions = try table.primaryKey.map { name in
            guard let position = rows.columns.firstIndex(of: name) else {
                throw DepotError(
                    .missingColumns, "a write to \(table.name) lacks key column \(name)", table: table.name)
            }
            return position
        }
        let keys = (0..<rows.count).map { index in
            let row = rows.row(index)
            return keyPositions.map { row[row.startIndex + $0] }
        }
        let before = try await RowReads.rows(of: table, keys: keys, in: base)
        let written = try await base.write(rows, into: table, mode: mode)
        let after = try await RowReads.rows(of: table, keys: keys, in: base)
        try await record(table: table, keys: keys, before: before, after: after)
        return written
    }

    func update(_ query: UpdateQuery) async throws -> Int {
        guard synced.contains(query.table.name) else { return try await base.update(query) }
        let table = query.table
        let before = try await RowReads.rows(of: table, where: query.predicate, in: base)
        let updated = try await base.update(query)
        let keys = before.values.map { RowReads.key(of: $0, in: table) }
        let after = try await RowReads.rows(of: table, keys: keys, in: base)
        try await record(table: table, keys: keys, before: before, after: after)
        return updated
    }

    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        guard synced.contains(table.name) else { return try await base.delete(from: table, where: predicate) }
        let before = try await RowReads.rows(of: table, where: predicate, in: base)
        let deleted = try await base.delete(from: table, where: predicate)
        let keys = before.values.map { RowReads.key(of: $0, in: table) }
        try await record(table: table, keys: keys, before: before, after: [:])
        return deleted
    }

    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await base.savepoint { writer in
            try await body(RecordingWriter(base: writer, synced: synced, clock: clock))
        }
    }

    /// Appends an outbox entry for every key whose row changed between `before` and `after`.
    private func record(
        table: TableDescription, keys: [[StoredValue]], before: [String: [StoredValue]],
        after: [String: [StoredValue]]
    ) async throws {
        let outbox = Transaction(writer: base).repository(OutboxEntry.self)
        var next = (try await outbox.first(orderBy: [.descending(\.sequence)])?.sequence ?? 0) + 1
        let now = clock()
        var entries: [OutboxEntry] = []
        var recorded = Set<String>()
        let keyColumns = Set(table.primaryKey)
        for key in keys {
            let keyText = try SyncJSON.keyText(key)
            guard recorded.insert(keyText).inserted else { continue }
            let old = before[keyText]
            let new = after[keyText]
            var changes: [String: StoredValue] = [:]
            let operation: String
            switch (old, new) {
            case (nil, nil):
                continue
            case (.some, nil):
                operation = OutboxEntry.delete
            case (let old, .some(let new)):
                operation = OutboxEntry.set
                for (index, column) in table.columns.enumerated() where !keyColumns.contains(column.name) {
                    if let old, RowReads.same(old[index], new[index]) { continue }
                    changes[column.name] = new[index]
                }
                if old != nil, changes.isEmpty { continue }
            }
            let baseText = try old.map { row in
                try SyncJSON.valuesText(
                    Dictionary(uniqueKeysWithValues: zip(table.columns.map(\.name), row)))
            }
            entries.append(
                OutboxEntry(
                    sequence: next, table: table.name, key: keyText, operation: operation,
                    changes: try SyncJSON.valuesText(changes), base: baseText, editedAt: now,
                    idempotencyKey: UUID().uuidString, attempts: 0, rejection: nil))
            next += 1
        }
        if !entries.isEmpty {
            // Straight to the writer: no savepoint of its own inside this write's.
            let schema = OutboxEntry.schema
            try await base.write(
                RowBatch(columns: schema.table.columns.map(\.name), values: entries.flatMap(schema.values(of:))),
                into: schema.table, mode: .insert)
        }
    }

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] { try await base.aggregate(query) }
}

/// Whole rows read by key or predicate, as stored values in the table's column order.
enum RowReads {
    /// The rows matching `predicate`, by key text.
    static func rows(
        of table: TableDescription, where predicate: PredicateNode?, in reader: any StoreReader
    ) async throws -> [String: [StoredValue]] {
        let width = table.columns.count
        let rows = try await reader.scan(SelectQuery(table: table, predicate: predicate)) { cursor in
            var rows: [[StoredValue]] = []
            while try cursor.next() { rows.append((0..<width).map { cursor.value(at: $0) }) }
            return rows
        }
        var byKey: [String: [StoredValue]] = [:]
        for row in rows { byKey[try SyncJSON.keyText(key(of: row, in: table))] = row }
        return byKey
    }

    /// The key texts of every row of `table` (only the key columns are read).
    static func keyTexts(of table: TableDescription, in reader: any StoreReader) async throws -> [String] {
        var query = SelectQuery(table: table)
        query.columns = table.primaryKey
        let width = table.primaryKey.count
        let keys = try await reader.scan(query) { cursor in
            var keys: [[StoredValue]] = []
            while try cursor.next() { keys.append((0..<width).map { cursor.value(at: $0) }) }
            return keys
        }
        return try keys.map { try SyncJSON.keyText($0) }
    }

    /// The rows with these keys, by key text (read in chunks).
    static func rows(
        of table: TableDescription, keys: [[StoredValue]], in reader: any StoreReader
    ) async throws -> [String: [StoredValue]] {
        var byKey: [String: [StoredValue]] = [:]
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 500, keys.count)]
            start += 500
            let found = try await rows(
                of: table, where: PredicateNode.matching(keys: chunk, primaryKey: table.primaryKey), in: reader)
            byKey.merge(found) { _, new in new }
        }
        return byKey
    }

    /// Removes the rows of `table` with `keys`, in chunks.
    static func remove(from table: TableDescription, keys: [[StoredValue]], in writer: any StoreWriter) async throws {
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 500, keys.count)]
            start += 500
            _ = try await writer.delete(
                from: table, where: PredicateNode.matching(keys: chunk, primaryKey: table.primaryKey))
        }
    }

    static func key(of row: [StoredValue], in table: TableDescription) -> [StoredValue] {
        table.primaryKey.compactMap { name in table.columns.firstIndex { $0.name == name }.map { row[$0] } }
    }

    /// Whether two stored values are the same value (NaN-free: stores refuse NaN).
    static func same(_ a: StoredValue, _ b: StoredValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.null, _), (_, .null): false
        default: a == b
        }
    }
}
