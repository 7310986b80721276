import Depot
import DepotSync
import Foundation
import Synchronization

/// One change to a served table (`depot_sync_log`): which row, set or deleted, and the row as it
/// was before (what decides whether a caller who no longer sees the row had it).
@Entity("depot_sync_log")
struct SyncLogEntry: Equatable {
    @Indexed("depot_sync_log_by_table") @Column("table_name") var table: String
    /// The order of commits: a transaction takes its numbers holding the log's head row, which
    /// it keeps until it commits, so a smaller number never commits after a larger one.
    @PrimaryKey @Indexed("depot_sync_log_by_table") var sequence: Int
    /// The row's key (DepotSync's key text).
    @Column("row_key") var key: String
    @Column("is_delete") var isDelete: Bool
    /// The whole row before the change (by column, JSON text), `nil` when the change created it.
    var before: String?
}

/// The log's one head row (`depot_sync_head`): the last sequence number taken, how far the log is
/// pruned, and the epoch that cursors carry (a new one makes every cursor expire).
@Entity("depot_sync_head")
struct SyncHead: Equatable {
    @PrimaryKey var id: String
    var head: Int
    /// Entries up to this sequence are pruned: a cursor before it has expired.
    var pruned: Int
    var epoch: String

    static let only = "head"
}

/// A push applied, by caller and idempotency key (`depot_sync_ledger`): the same request again
/// answers the stored answer; the key with another request is refused. Pruned with the log.
@Entity("depot_sync_ledger")
struct SyncLedgerEntry: Equatable {
    @PrimaryKey var caller: String
    @PrimaryKey @Column("idempotency_key") var key: String
    @Column("table_name") var table: String
    /// A fingerprint of the request (table, key, operation, changes, base, time).
    var request: String
    /// The log's head when the push was applied (what pruning compares).
    @Indexed("depot_sync_ledger_by_sequence") var sequence: Int
    var answer: String
}

/// When each column of a row was last written (`depot_sync_field_times`): microseconds since 2001
/// by column name, as JSON, and the row's version. What last-writer-wins and a push's base
/// version compare; removed with the row.
@Entity("depot_sync_field_times")
struct SyncFieldTimes: Equatable {
    @PrimaryKey @Column("table_name") var table: String
    @PrimaryKey @Column("row_key") var key: String
    var times: String
    /// The row's version: the log sequence of its last logged change (what a client sends back
    /// as a push's `base_version`; 0 for a row without one).
    var version: Int
    /// The log sequence of each column's last logged write, by column name, as JSON: a push
    /// conflicts when a column it changes was written after its base version.
    @Column("column_versions") var columnVersions: String

    /// When each column was last written, by name (microseconds since 2001).
    var decoded: [String: Int64] {
        get throws { try Self.decode(times, of: "field times", column: "times", table: table, key: key) }
    }

    /// The log sequence of each column's last write, by name.
    var decodedVersions: [String: Int] {
        get throws {
            try Self.decode(columnVersions, of: "column versions", column: "column_versions", table: table, key: key)
        }
    }

    private static func decode<Value: Decodable>(
        _ text: String, of what: String, column: String, table: String, key: String
    ) throws -> [String: Value] {
        do {
            return try JSONDecoder().decode([String: Value].self, from: Data(text.utf8))
        } catch {
            throw DepotError(
                .decodingFailed, "the \(what) of \(table) \(key) are not readable: \(error)",
                table: schema.tableName, column: column)
        }
    }

    static func text(_ times: [String: some Encodable]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(times), as: UTF8.self)
    }
}

/// A hybrid logical clock: the physical clock, but never the same or an earlier time twice in
/// this process; field times also move past the time a field already has (``FieldTimes``).
final class HybridClock: Sendable {
    private let physical: @Sendable () -> Date
    private let last = Mutex<Int64>(.min)

    init(_ physical: @escaping @Sendable () -> Date) { self.physical = physical }

    /// Microseconds since 2001, later than any this clock gave before.
    func now() -> Int64 {
        let time = physical().microseconds
        return last.withLock { last in
            last = Swift.max(time, last == .min ? time : last + 1)
            return last
        }
    }
}

/// The writes of a transaction that records changes: the time a push's fields are written at.
enum WriteContext {
    /// The time (microseconds since 2001) the fields written now get; the clock's now when `nil`.
    @TaskLocal static var fieldTime: Int64?
}

/// The recorder behind a ``SyncServer``'s store: every change to a served table appends a log
/// entry, moves the row's field times on and prunes what the log no longer keeps.
struct ChangeLog: Sendable {
    let served: Set<String>
    let clock: HybridClock
    let logLength: Int

    var recorder: CapturingWriter.Recorder {
        { table, keys, before, after, writer in
            try await record(table: table, keys: keys, before: before, after: after, in: writer)
        }
    }

    private func record(
        table: TableDescription, keys: [[StoredValue]], before: [String: [StoredValue]],
        after: [String: [StoredValue]], in writer: any StoreWriter
    ) async throws {
        let changes = try RowReads.changes(of: table, keys: keys, before: before, after: after)
        guard !changes.isEmpty else { return }
        let tx = Transaction(writer: writer)
        let head = try await Self.take(changes.count, in: tx)
        let first = head.head - changes.count + 1
        let names = table.columns.map(\.name)
        let entries = try changes.enumerated().map { offset, change in
            SyncLogEntry(
                table: table.name, sequence: first + offset, key: change.keyText, isDelete: change.isDelete,
                before: try change.before.map {
                    try SyncJSON.valuesText(Dictionary(uniqueKeysWithValues: zip(names, $0)))
                })
        }
        try await tx.repository(SyncLogEntry.self).insert(entries)
        try await touchFieldTimes(of: table.name, changes, first: first, in: tx)
        // The log keeps its newest entries, and the ledger the pushes that made them.
        let cut = head.head - logLength
        if cut > head.pruned {
            _ = try await tx.repository(SyncLogEntry.self).remove(where: \.sequence <= cut)
            _ = try await tx.repository(SyncLedgerEntry.self).remove(where: \.sequence <= cut)
            _ = try await tx.repository(SyncHead.self).update(
                where: \.id == SyncHead.only, set: [.set(\.pruned, to: cut)])
        }
    }

    /// Takes `count` sequence numbers: the head row's update holds its lock until the
    /// transaction ends (one writer at a time on SQLite), so numbers commit in order.
    static func take(_ count: Int, in tx: Transaction) async throws -> SyncHead {
        let heads = tx.repository(SyncHead.self)
        let updated = try await heads.update(where: \.id == SyncHead.only, set: [.set(\.head, to: \.head + count)])
        guard updated == 1, let head = try await heads.find(SyncHead.only) else {
            throw DepotError(
                .storage,
                "the sync log has no head row (\(SyncHead.schema.tableName)): open the store with SyncServer.open",
                table: SyncHead.schema.tableName)
        }
        return head
    }

    /// Moves the written columns' times on (to the push's time or the clock's, and always past
    /// the time they had) and each row's version to its change's sequence number (`first` for
    /// the first change), and forgets the times of deleted rows.
    private func touchFieldTimes(
        of table: String, _ changes: [RowReads.RowChange], first: Int, in tx: Transaction
    ) async throws {
        let repository = tx.repository(SyncFieldTimes.self)
        let keys = changes.map(\.keyText)
        var stored: [String: SyncFieldTimes] = [:]
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 500, keys.count)]
            start += 500
            for row in try await repository.fetch(where: \.table == table && .in(\.key, chunk)) {
                stored[row.key] = row
            }
        }
        let time = WriteContext.fieldTime ?? clock.now()
        var written: [SyncFieldTimes] = []
        var deleted: [String] = []
        for (offset, change) in changes.enumerated() {
            if change.isDelete {
                if stored[change.keyText] != nil { deleted.append(change.keyText) }
                continue
            }
            var times = try stored[change.keyText]?.decoded ?? [:]
            var versions = try stored[change.keyText]?.decodedVersions ?? [:]
            for column in change.changes.keys {
                times[column] = Swift.max(time, (times[column] ?? .min) &+ 1)
                versions[column] = first + offset
            }
            written.append(
                SyncFieldTimes(
                    table: table, key: change.keyText, times: try SyncFieldTimes.text(times), version: first + offset,
                    columnVersions: try SyncFieldTimes.text(versions)))
        }
        if !written.isEmpty { try await repository.upsert(written) }
        if !deleted.isEmpty { _ = try await repository.remove(where: \.table == table && .in(\.key, deleted)) }
    }
}

/// The store a ``SyncServer`` hands out: the ordinary `Store` API, every write to a served table
/// recorded in the change log in the same transaction.
final class LoggedStore: Store {
    let base: any Store
    let log: ChangeLog

    init(base: any Store, log: ChangeLog) {
        self.base = base
        self.log = log
    }

    func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        let log = self.log
        return try await base.transaction { writer in
            try await body(
                CapturingWriter(
                    base: writer, captured: log.served,
                    // The head's lock first: the rows read before a write are then the rows it
                    // changes, whatever another process commits meanwhile.
                    prepare: { writer in _ = try await ChangeLog.take(0, in: Transaction(writer: writer)) },
                    recorder: log.recorder))
        }
    }

    func commits() -> AsyncStream<StoreCommit> { base.commits() }

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] { try await base.aggregate(query) }
}
