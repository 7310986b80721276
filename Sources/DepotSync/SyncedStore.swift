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
/// Read with SQL through ``base`` when it is a SQL store; write through repositories. The rows
/// after a write are worked out from the rows before it and the values written (they are read
/// again only where the store fills them in: defaults of a row a partial batch creates, an
/// update by addition), so a trigger of your own that changes a written row goes unrecorded.
/// Its commits announce the outbox table (`depot_sync_outbox`) beside the tables written.
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
            try await body(
                CapturingWriter(base: writer, captured: synced, recorder: OutboxRecorder.recorder(clock: clock)))
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

/// A transaction's writer that reads the rows a write to some tables touches before and after it
/// and hands both to a recorder, inside the same transaction: how the client's outbox and the
/// server's change log learn what changed, whichever repository call changed it.
package struct CapturingWriter: StoreWriter {
    /// Records the change of the rows with `keys` of `table` from `before` to `after` (by key
    /// text; a key missing from `after` was deleted), writing through `writer`.
    package typealias Recorder =
        @Sendable (
            _ table: TableDescription, _ keys: [[StoredValue]], _ before: [String: [StoredValue]],
            _ after: [String: [StoredValue]], _ writer: any StoreWriter
        ) async throws -> Void

    /// Runs before a write to a captured table reads the rows it will change: where a recorder
    /// needs a lock held across the read, the write and the record (the server's log head, so
    /// that two processes cannot interleave between them), it takes it here.
    package typealias Preparation = @Sendable (_ writer: any StoreWriter) async throws -> Void

    let base: any StoreWriter
    let captured: Set<String>
    let recorder: Recorder
    let prepare: Preparation?

    /// Captures writes to the tables named `captured` made through `base`.
    package init(
        base: any StoreWriter, captured: Set<String>, prepare: Preparation? = nil, recorder: @escaping Recorder
    ) {
        self.base = base
        self.captured = captured
        self.prepare = prepare
        self.recorder = recorder
    }

    package func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        guard captured.contains(table.name), rows.count > 0 else {
            return try await base.write(rows, into: table, mode: mode)
        }
        // The checks every store's writer makes first, so a malformed batch fails as it does there.
        let keyPositions = try table.keyPositions(inWrite: rows)
        try await prepare?(base)
        let keys = (0..<rows.count).map { index in
            let row = rows.row(index)
            return keyPositions.map { row[row.startIndex + $0] }
        }
        let before = try await RowReads.rows(of: table, keys: keys, in: base)
        let written = try await base.write(rows, into: table, mode: mode)
        let after: [String: [StoredValue]]
        if let known = try RowReads.rows(of: table, after: rows, mode: mode, keys: keys, before: before) {
            after = known
        } else {
            after = try await RowReads.rows(of: table, keys: keys, in: base)
        }
        try await recorder(table, keys, before, after, base)
        return written
    }

    package func update(_ query: UpdateQuery) async throws -> Int {
        guard captured.contains(query.table.name) else { return try await base.update(query) }
        let table = query.table
        try await prepare?(base)
        let before = try await RowReads.rows(of: table, where: query.predicate, in: base)
        let updated = try await base.update(query)
        let keys = before.values.map { RowReads.key(of: $0, in: table) }
        let after: [String: [StoredValue]]
        if let known = RowReads.rows(of: table, after: query, before: before) {
            after = known
        } else {
            after = try await RowReads.rows(of: table, keys: keys, in: base)
        }
        try await recorder(table, keys, before, after, base)
        return updated
    }

    package func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        guard captured.contains(table.name) else { return try await base.delete(from: table, where: predicate) }
        try await prepare?(base)
        let before = try await RowReads.rows(of: table, where: predicate, in: base)
        let deleted = try await base.delete(from: table, where: predicate)
        let keys = before.values.map { RowReads.key(of: $0, in: table) }
        try await recorder(table, keys, before, [:], base)
        return deleted
    }

    package func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await base.savepoint { writer in
            try await body(CapturingWriter(base: writer, captured: captured, prepare: prepare, recorder: recorder))
        }
    }

    package func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    package func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    package func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try await base.aggregate(query)
    }
}

/// The outbox's recorder: an outbox entry for every key whose row changed.
enum OutboxRecorder {
    static func recorder(clock: @escaping @Sendable () -> Date) -> CapturingWriter.Recorder {
        { table, keys, before, after, writer in
            try await record(table: table, keys: keys, before: before, after: after, at: clock(), in: writer)
        }
    }

    /// Appends an outbox entry for every key whose row changed between `before` and `after`.
    private static func record(
        table: TableDescription, keys: [[StoredValue]], before: [String: [StoredValue]],
        after: [String: [StoredValue]], at now: Date, in base: any StoreWriter
    ) async throws {
        let outbox = Transaction(writer: base).repository(OutboxEntry.self)
        // The largest sequence only (an index lookup), not the last entry decoded with its JSON.
        var next = (try await outbox.max(\.sequence) ?? 0) + 1
        var entries: [OutboxEntry] = []
        for change in try RowReads.changes(of: table, keys: keys, before: before, after: after) {
            let baseText = try change.before.map { row in
                try SyncJSON.valuesText(Dictionary(uniqueKeysWithValues: zip(table.columns.map(\.name), row)))
            }
            entries.append(
                OutboxEntry(
                    sequence: next, table: table.name, key: change.keyText,
                    operation: change.isDelete ? OutboxEntry.Operation.delete : OutboxEntry.Operation.set,
                    changes: try SyncJSON.valuesText(change.changes), base: baseText, editedAt: now,
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
}

/// Whole rows read by key or predicate, as stored values in the table's column order.
package enum RowReads {
    /// The rows matching `predicate`, by key text.
    package static func rows(
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
    package static func keyTexts(of table: TableDescription, in reader: any StoreReader) async throws -> [String] {
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
    package static func rows(
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
    package static func remove(from table: TableDescription, keys: [[StoredValue]], in writer: any StoreWriter)
        async throws
    {
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 500, keys.count)]
            start += 500
            _ = try await writer.delete(
                from: table, where: PredicateNode.matching(keys: chunk, primaryKey: table.primaryKey))
        }
    }

    /// The rows of `keys` after `rows` were written with `mode`, worked out from `before` (the
    /// rows of those keys before the write) without reading them again; `nil` when that cannot
    /// be known: a row made of a partial batch (its other columns take defaults the store
    /// knows). A stored value may be finer than the store keeps (a date's nanoseconds on
    /// PostgreSQL): ``same(_:_:type:)`` compares such values as the store keeps them.
    package static func rows(
        of table: TableDescription, after rows: RowBatch, mode: WriteMode, keys: [[StoredValue]],
        before: [String: [StoredValue]]
    ) throws -> [String: [StoredValue]]? {
        var positions: [Int?] = Array(repeating: nil, count: table.columns.count)
        for (position, name) in rows.columns.enumerated() {
            guard let index = table.columns.firstIndex(where: { $0.name == name }) else { return nil }
            positions[index] = position
        }
        let whole = positions.allSatisfy { $0 != nil }
        var after = before
        for (index, key) in keys.enumerated() {
            let keyText = try SyncJSON.keyText(key)
            let row = rows.row(index)
            if let stored = after[keyText] {
                // Updated in place: the batch's columns over the stored row (`.insert` threw).
                after[keyText] = stored.indices.map { column in
                    positions[column].map { row[row.startIndex + $0] } ?? stored[column]
                }
            } else if mode == .update {
                continue  // not stored: skipped
            } else if whole {
                after[keyText] = positions.map { row[row.startIndex + ($0 ?? 0)] }
            } else {
                return nil
            }
        }
        return after
    }

    /// The rows of `before` after `update` assigned its values, without reading them again;
    /// `nil` when an assignment is computed by the store (an addition).
    package static func rows(of table: TableDescription, after update: UpdateQuery, before: [String: [StoredValue]])
        -> [String: [StoredValue]]?
    {
        var assigned: [(index: Int, value: StoredValue)] = []
        for assignment in update.assignments {
            guard case .value(let value) = assignment.value,
                let index = table.columns.firstIndex(where: { $0.name == assignment.column })
            else { return nil }
            assigned.append((index, value))
        }
        return before.mapValues { row in
            var row = row
            for (index, value) in assigned { row[index] = value }
            return row
        }
    }

    package static func key(of row: [StoredValue], in table: TableDescription) -> [StoredValue] {
        table.primaryKey.compactMap { name in table.columns.firstIndex { $0.name == name }.map { row[$0] } }
    }

    /// One row's change between two reads: its key (as text), whether it was deleted, the row
    /// before (`nil` when created) and the columns whose values differ (the new values).
    package struct RowChange: Sendable {
        package var key: [StoredValue]
        package var keyText: String
        package var isDelete: Bool
        package var before: [StoredValue]?
        package var after: [StoredValue]?
        package var changes: [String: StoredValue]
    }

    /// The rows of `keys` that changed between `before` and `after`, each key once, in the order
    /// of `keys`: created, deleted, or with some non-key column of another value.
    package static func changes(
        of table: TableDescription, keys: [[StoredValue]], before: [String: [StoredValue]],
        after: [String: [StoredValue]]
    ) throws -> [RowChange] {
        var result: [RowChange] = []
        var seen = Set<String>()
        let keyColumns = Set(table.primaryKey)
        for key in keys {
            let keyText = try SyncJSON.keyText(key)
            guard seen.insert(keyText).inserted else { continue }
            let old = before[keyText]
            let new = after[keyText]
            var changes: [String: StoredValue] = [:]
            switch (old, new) {
            case (nil, nil):
                continue
            case (.some, nil):
                break
            case (let old, .some(let new)):
                for (index, column) in table.columns.enumerated() where !keyColumns.contains(column.name) {
                    if let old, same(old[index], new[index], type: column.type) { continue }
                    changes[column.name] = new[index]
                }
                if old != nil, changes.isEmpty { continue }
            }
            result.append(
                RowChange(
                    key: key, keyText: keyText, isDelete: new == nil, before: old, after: new, changes: changes))
        }
        return result
    }

    /// Whether two stored values of a column of `type` are the same value (NaN-free: stores refuse
    /// NaN). JSON texts compare as JSON: PostgreSQL's `jsonb` gives back its own spacing and key
    /// order, so the text a client re-encodes differs from the server's for the same value.
    package static func same(_ a: StoredValue, _ b: StoredValue, type: ColumnType? = nil) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.text(let first), .text(let second)) where type == .json && first != second:
            return canonicalJSON(first).map { $0 == canonicalJSON(second) } ?? false
        case (.date(let first), .date(let second)):
            // To the microsecond, what every store and the wire keep: a date written with `Date()`
            // holds more on SQLite and in memory, and must still equal its copy from the wire.
            return first.microseconds == second.microseconds
        default: return a == b
        }
    }

    /// JSON text with sorted keys and no spacing; `nil` when it is not JSON.
    private static func canonicalJSON(_ text: String) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) else {
            return nil
        }
        return try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
    }
}

extension SyncedStore: CommitProgressReporting {
    /// The base store's: its commits are this store's.
    package var commitProgress: CommitProgress? { (base as? any CommitProgressReporting)?.commitProgress }
}

extension SyncedStore: CommitListening {
    /// The base store's listener (PostgreSQL's `LISTEN`): its commits are this store's. A base
    /// without one hears every commit it can at once.
    package func waitUntilListening(timeout: Duration) async -> Bool {
        guard let listening = base as? any CommitListening else { return true }
        return await listening.waitUntilListening(timeout: timeout)
    }
}
