import Depot
import DepotSync
import Foundation
import Tracing

extension SyncServer {
    /// One page of `table`'s feed for `caller`, after `cursor` (`nil`: a full copy from the start).
    ///
    /// A full copy pages through the caller's rows in key order, then goes on with the changes
    /// logged since it began. A change page lists each changed row once: whole when the caller
    /// sees it now, as a deleted key when it was deleted or left the caller's scope (and the
    /// caller may have had it). A cursor of another epoch, or older than the log reaches,
    /// answers an expired page: the client copies in full again.
    ///
    /// - Parameters:
    ///   - table: The served table's name.
    ///   - cursor: Where the caller's last page ended; `nil` starts a full copy.
    ///   - limit: Rows (or log entries) per page; the configuration's default when `nil`.
    ///   - caller: Who asks: the scope is theirs.
    /// - Throws: ``SyncProblem`` (404 for a table not served, 400 for a limit out of range or a
    ///   cursor this server did not give); `DepotError` of the store.
    public func feed(table: String, cursor: String?, limit: Int? = nil, caller: Caller) async throws
        -> SyncProtocol.FeedPage
    {
        try await withSpan("sync feed \(table)", ofKind: .internal) { span in
            span.attributes["depot.sync.table"] = table
            span.attributes["depot.sync.caller"] = caller.id
            span.attributes["depot.sync.full_copy"] = cursor == nil || cursor?.hasPrefix("copy:") == true
            // The head, the log and the rows are separate reads: on a store reading from replicas
            // they could come from standbys at different positions, and a page could skip log
            // entries for good. The feed reads the primary (FreshReads).
            let page = try await FreshReads.run {
                try await feedPage(table: table, cursor: cursor, limit: limit, caller: caller)
            }
            span.attributes["depot.sync.rows"] = page.rows.count
            span.attributes["depot.sync.deleted"] = page.deleted.count
            span.attributes["depot.sync.expired"] = page.expired
            return page
        }
    }

    private func feedPage(table: String, cursor: String?, limit: Int?, caller: Caller) async throws
        -> SyncProtocol.FeedPage
    {
        let served = try served(table)
        let limit = limit ?? configuration.defaultPageSize
        guard (1...configuration.maximumPageSize).contains(limit) else {
            throw SyncProblem(status: 400, "limit must be 1 to \(configuration.maximumPageSize), not \(limit)")
        }
        guard let head = try await base.repository(SyncHead.self).find(SyncHead.only) else {
            throw DepotError(
                .storage, "the sync log has no head row: open the store with SyncServer.open",
                table: SyncHead.schema.tableName)
        }
        let scope = served.scope(caller)
        defer { count("depot_sync_server_feed_pages", [("table", table)]) }
        guard let cursor else {
            return try await copyPage(
                served, scope: scope, epoch: head.epoch, from: head.head, after: nil, limit: limit)
        }
        guard let position = FeedCursor(cursor), position.copiedThrough.map({ Self.fits($0, served.table) }) ?? true
        else {
            throw SyncProblem(status: 400, "cursor '\(cursor.prefix(80))' is not one this server gave")
        }
        guard position.epoch == head.epoch, position.sequence >= head.pruned, position.sequence <= head.head else {
            return SyncProtocol.FeedPage(rows: [], deleted: [], cursor: "", more: false, expired: true)
        }
        if let after = position.copiedThrough {
            return try await copyPage(
                served, scope: scope, epoch: head.epoch, from: position.sequence, after: after, limit: limit)
        }
        return try await changesPage(served, scope: scope, head: head, since: position.sequence, limit: limit)
    }

    /// The caller's rows after key `after` in key order; the copy began when the log was at `from`.
    private func copyPage(
        _ served: any ServedTable<Caller>, scope: PredicateNode, epoch: String, from: Int, after: [StoredValue]?,
        limit: Int
    ) async throws -> SyncProtocol.FeedPage {
        let table = served.table
        var predicate = scope
        if let after { predicate = .and([scope, Self.keys(of: table, after: after)]) }
        let rows = try await Self.read(SelectQuery(table: table, predicate: predicate, limit: limit), from: base)
        let wire = rows.map { SyncProtocol.row($0, of: table) }
        let versions = try await versions(of: rows, in: table)
        guard rows.count == limit, let last = rows.last else {
            // The copy is done: next, the changes logged since it began.
            return SyncProtocol.FeedPage(
                rows: wire, deleted: [], cursor: try FeedCursor(epoch: epoch, sequence: from).text(), more: true,
                versions: versions)
        }
        let key = RowReads.key(of: last, in: table)
        return SyncProtocol.FeedPage(
            rows: wire, deleted: [], cursor: try FeedCursor(epoch: epoch, sequence: from, copiedThrough: key).text(),
            more: true, versions: versions)
    }

    /// The changes to the caller's view logged after `since`.
    private func changesPage(
        _ served: any ServedTable<Caller>, scope: PredicateNode, head: SyncHead, since: Int, limit: Int
    ) async throws -> SyncProtocol.FeedPage {
        let table = served.table
        // Everything up to the head read first is committed (numbers commit in order), so a page
        // that ends short of `limit` may move the cursor to it.
        let entries = try await base.repository(SyncLogEntry.self).fetch(
            where: \.table == table.name && \.sequence > since && \.sequence <= head.head,
            orderBy: [.ascending(\.sequence)], limit: limit)
        // A commit that pruned past `since` after the head was read may have taken entries this
        // page should hold: read the head again, and send the client to a full copy if so.
        guard let after = try await base.repository(SyncHead.self).find(SyncHead.only), after.pruned <= since,
            after.epoch == head.epoch
        else {
            return SyncProtocol.FeedPage(rows: [], deleted: [], cursor: "", more: false, expired: true)
        }
        let reached = entries.count == limit ? entries.last?.sequence ?? head.head : head.head
        var keys: [String] = []
        var maybeHad: Set<String> = []
        var seen: Set<String> = []
        let couldSee = try Self.condition(scope, table: table)
        for entry in entries {
            if seen.insert(entry.key).inserted { keys.append(entry.key) }
            // A row the caller may have had before this change: its deletion or exit must reach it.
            if let before = entry.before {
                let values = try SyncJSON.values(before)
                // A column the entry does not know (added since) leaves the answer open: "maybe".
                let row = table.columns.compactMap { values[$0.name] }
                if row.count < table.columns.count || couldSee(row) { maybeHad.insert(entry.key) }
            }
        }
        var rows: [[StoredValue]] = []
        var start = 0
        while start < keys.count {
            let chunk = try keys[start..<min(start + 500, keys.count)].map(SyncJSON.key)
            start += 500
            let matching = PredicateNode.matching(keys: chunk, primaryKey: table.primaryKey)
            rows += try await Self.read(SelectQuery(table: table, predicate: .and([scope, matching])), from: base)
        }
        let visible = try Set(rows.map { try SyncJSON.keyText(RowReads.key(of: $0, in: table)) })
        let deleted = try keys.filter { !visible.contains($0) && maybeHad.contains($0) }.map { key in
            SyncProtocol.key(try SyncJSON.key(key), of: table)
        }
        return SyncProtocol.FeedPage(
            rows: rows.map { SyncProtocol.row($0, of: table) }, deleted: deleted,
            cursor: try FeedCursor(epoch: head.epoch, sequence: reached).text(), more: entries.count == limit,
            versions: try await versions(of: rows, in: table))
    }

    /// The versions of `rows` (read after them: at least as new as their values), 0 for a row no
    /// logged write has changed.
    private func versions(of rows: [[StoredValue]], in table: TableDescription) async throws -> [Int] {
        let keys = try rows.map { try SyncJSON.keyText(RowReads.key(of: $0, in: table)) }
        var versions: [String: Int] = [:]
        var start = 0
        while start < keys.count {
            let chunk = Array(keys[start..<min(start + 500, keys.count)])
            start += 500
            for stored in try await base.repository(SyncFieldTimes.self).fetch(
                where: \.table == table.name && .in(\.key, chunk))
            {
                versions[stored.key] = stored.version
            }
        }
        return keys.map { versions[$0] ?? 0 }
    }

    /// Whole rows of a query, in column order.
    static func read(_ query: SelectQuery, from reader: any StoreReader) async throws -> [[StoredValue]] {
        let width = query.table.columns.count
        return try await reader.scan(query) { cursor in
            var rows: [[StoredValue]] = []
            while try cursor.next() { rows.append((0..<width).map { cursor.value(at: $0) }) }
            return rows
        }
    }

    /// Rows whose key comes after `key` in key order (the next page of a copy).
    static func keys(of table: TableDescription, after key: [StoredValue]) -> PredicateNode {
        let columns = table.primaryKey
        return .or(
            columns.indices.map { position in
                .and(
                    (0..<position).map { PredicateNode.compare(column: columns[$0], .equal, key[$0]) }
                        + [.compare(column: columns[position], .greater, key[position])])
            })
    }

    /// Whether a row as it was may have been inside the scope: the scope evaluated as a `WHERE`
    /// would (unknown is outside); always `true` for a scope through another table, which the
    /// row alone cannot tell (such a scope names every changed key to every caller, as deleted
    /// where it cannot see the row).
    static func condition(_ scope: PredicateNode, table: TableDescription) throws
        -> @Sendable ([StoredValue]) -> Bool
    {
        guard scope.subqueries.isEmpty else { return { _ in true } }
        let condition = try QueryEvaluator(table: table).condition(scope)
        return { row in condition(row) == true }
    }

    /// Whether a copy cursor's key has the table's key columns' kinds (a forged one would reach
    /// the store as a comparison it refuses).
    static func fits(_ key: [StoredValue], _ table: TableDescription) -> Bool {
        guard key.count == table.primaryKey.count else { return false }
        let wire = SyncProtocol.key(key, of: table)
        guard let decoded = try? SyncProtocol.key(wire, of: table) else { return false }
        return zip(decoded, key).allSatisfy { RowReads.same($0, $1) }
    }
}

/// Where a feed stands: the epoch, the log sequence the caller is up to and, during a full copy,
/// the last key copied. As text: `copy:<epoch>:<sequence>:<key>` or `log:<epoch>:<sequence>`.
struct FeedCursor: Equatable {
    var epoch: String
    var sequence: Int
    var copiedThrough: [StoredValue]?

    init(epoch: String, sequence: Int, copiedThrough: [StoredValue]? = nil) {
        self.epoch = epoch
        self.sequence = sequence
        self.copiedThrough = copiedThrough
    }

    init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, let sequence = Int(parts[2]), sequence >= 0, !parts[1].isEmpty else { return nil }
        epoch = parts[1]
        self.sequence = sequence
        switch (parts[0], parts.count) {
        case ("log", 3):
            copiedThrough = nil
        case ("copy", 4):
            guard let data = Data(base64URL: parts[3]),
                let key = try? SyncJSON.key(String(decoding: data, as: UTF8.self))
            else { return nil }
            copiedThrough = key
        default:
            return nil
        }
    }

    func text() throws -> String {
        guard let copiedThrough else { return "log:\(epoch):\(sequence)" }
        return "copy:\(epoch):\(sequence):\(Data(try SyncJSON.keyText(copiedThrough).utf8).base64URL)"
    }
}

extension Data {
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
