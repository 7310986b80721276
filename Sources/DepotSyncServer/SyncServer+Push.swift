import Depot
import DepotSync
import Foundation
import Tracing

/// A push as the server checked it: values decoded into the table's columns.
struct DecodedPush: Sendable {
    var key: [StoredValue]
    var keyText: String
    var isDelete: Bool
    var changes: [String: StoredValue]
    var base: [String: StoredValue]?
    /// The edit's time capped at the server's clock, in microseconds since 2001.
    var editedAt: Int64
    /// The version of the row the client had (`base_version`), if it sent one.
    var baseVersion: Int?
}

/// What a push did: its status and answer.
struct PushOutcome: Sendable {
    var status: Int
    var answer: SyncProtocol.PushAnswer
}

extension SyncServer {
    /// Applies one push of `caller` to `table`: the body a client's `POST {table}/push` carries,
    /// under its `Idempotency-Key`.
    ///
    /// - Returns: 200 with the row as stored (`status` "applied", or "resolved" when the table's
    ///   policy settled a conflict on the server), or 409 with the server's row and field times.
    /// - Throws: ``SyncProblem``: 400 without a key or with a body that is not a push, 413 for a
    ///   body over the limit, 422 for values that do not fit the table (naming the column) or a
    ///   key reused for another request, 403 when the table takes no pushes, the hook refuses
    ///   or the row would leave the caller's scope, 404 for a row the caller cannot see;
    ///   `DepotError` of the store (nothing is written).
    public func push(table: String, idempotencyKey: String?, body: Data, caller: Caller) async throws -> (
        status: Int, answer: SyncProtocol.PushAnswer
    ) {
        try await withSpan("sync push \(table)", ofKind: .internal) { span in
            span.attributes["depot.sync.table"] = table
            span.attributes["depot.sync.caller"] = caller.id
            do {
                let (status, answer) = try await tracedPush(
                    table: table, idempotencyKey: idempotencyKey, body: body, caller: caller)
                span.attributes["depot.sync.result"] = answer.status
                span.attributes["http.response.status_code"] = status
                return (status, answer)
            } catch let problem as SyncProblem {
                span.attributes["depot.sync.result"] = "refused"
                span.attributes["http.response.status_code"] = problem.status
                throw problem
            }
        }
    }

    private func tracedPush(table: String, idempotencyKey: String?, body: Data, caller: Caller) async throws -> (
        status: Int, answer: SyncProtocol.PushAnswer
    ) {
        let served = try served(table)
        do {
            let outcome = try await apply(served, idempotencyKey: idempotencyKey, body: body, caller: caller)
            count("depot_sync_server_pushes", [("table", table), ("result", outcome.answer.status)])
            if outcome.status == 409 {
                configuration.logger.info(
                    "sync push conflicts", metadata: ["table": "\(table)", "caller": "\(caller.id)"])
            }
            return (outcome.status, outcome.answer)
        } catch let problem as SyncProblem {
            count("depot_sync_server_pushes", [("table", table), ("result", "refused")])
            configuration.logger.notice(
                "sync push refused",
                metadata: [
                    "table": "\(table)", "caller": "\(caller.id)", "status": "\(problem.status)",
                    "reason": "\(problem.message)",
                ])
            throw problem
        }
    }

    private func apply(
        _ served: any ServedTable<Caller>, idempotencyKey: String?, body: Data, caller: Caller
    ) async throws -> PushOutcome {
        guard let idempotencyKey, !idempotencyKey.isEmpty else {
            throw SyncProblem(status: 400, "a push needs an Idempotency-Key header")
        }
        guard idempotencyKey.unicodeScalars.count <= 200 else {
            throw SyncProblem(status: 400, "the Idempotency-Key is longer than 200 characters")
        }
        guard body.count <= configuration.maximumBodyBytes else {
            throw SyncProblem(status: 413, "the body is larger than \(configuration.maximumBodyBytes) bytes")
        }
        let wire: SyncProtocol.Push
        do {
            wire = try JSONDecoder().decode(SyncProtocol.Push.self, from: body)
        } catch {
            throw SyncProblem(
                status: 400, "the body is not a push (key, operation, changes, base, edited_at): \(error)")
        }
        let push = try decode(wire, table: served.table)
        let request = try Self.fingerprint(wire, table: served.table.name)
        do {
            return try await write(push, request: request, served, idempotencyKey: idempotencyKey, caller: caller)
        } catch let error as DepotError where Self.valueRefusals.contains(error.kind) {
            // What the store refuses of the pushed values (a unique index, a reference, NUL on
            // PostgreSQL) is the push's fault: kept by the client as a rejection, not retried.
            throw SyncProblem(status: 422, error.message)
        }
    }

    /// Errors of the store that refuse the values written, not the store itself.
    static var valueRefusals: [DepotError.Kind] {
        [.constraintViolation, .decodingFailed, .encodingFailed, .missingColumns, .overflow]
    }

    private func write(
        _ push: DecodedPush, request: String, _ served: any ServedTable<Caller>, idempotencyKey: String,
        caller: Caller
    ) async throws -> PushOutcome {
        try await store.write { tx in
            // Pushes take turns from here: the head row's lock is held until commit.
            let before = try await ChangeLog.take(0, in: tx)
            let ledger = tx.repository(SyncLedgerEntry.self)
            if let earlier = try await ledger.find(caller.id, idempotencyKey) {
                guard earlier.request == request, earlier.table == served.table.name else {
                    throw SyncProblem(
                        status: 422,
                        "Idempotency-Key '\(idempotencyKey)' was used for another request (to \(earlier.table)); "
                            + "a new edit needs a new key")
                }
                return PushOutcome(
                    status: 200,
                    answer: try JSONDecoder().decode(SyncProtocol.PushAnswer.self, from: Data(earlier.answer.utf8)))
            }
            let outcome = try await WriteContext.$fieldTime.withValue(push.editedAt) {
                try await served.apply(push, caller: caller, in: tx, server: self)
            }
            let head = try await ChangeLog.take(0, in: tx)
            // Kept when it wrote (its replay must not apply again); a push that changed nothing is
            // answered afresh when replayed, and keeps no key that pruning would never reach.
            if outcome.status == 200, head.head > before.head {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                try await ledger.insert(
                    SyncLedgerEntry(
                        caller: caller.id, key: idempotencyKey, table: served.table.name, request: request,
                        sequence: head.head, answer: String(decoding: try encoder.encode(outcome.answer), as: UTF8.self)
                    ))
            }
            return outcome
        }
    }

    /// The push's values in the table's columns, checked against the limits.
    private func decode(_ wire: SyncProtocol.Push, table: TableDescription) throws(SyncProblem) -> DecodedPush {
        let isDelete: Bool
        switch wire.operation {
        case "set": isDelete = false
        case "delete": isDelete = true
        default: throw SyncProblem(status: 422, "operation must be \"set\" or \"delete\", not \"\(wire.operation)\"")
        }
        guard let edited = SyncProtocol.date(wire.editedAt) else {
            throw SyncProblem(status: 422, "edited_at must be an ISO 8601 date, not \"\(wire.editedAt.prefix(40))\"")
        }
        do {
            let key = try SyncProtocol.key(wire.key, of: table)
            let changes = try SyncProtocol.values(wire.changes, of: table)
            let base = try wire.base.map { row throws(DepotError) in try SyncProtocol.values(row, of: table) }
            for (name, value) in zip(table.primaryKey, key) {
                if let changed = changes[name], !RowReads.same(changed, value) {
                    throw SyncProblem(status: 422, "a push cannot change the key of \(table.name) (\(name))")
                }
            }
            for (name, value) in changes.merging(base ?? [:], uniquingKeysWith: { new, _ in new }) {
                try check(value, column: name, table: table.name)
            }
            for value in key { try check(value, column: "key", table: table.name) }
            let keyText = try SyncJSON.keyText(key)
            guard keyText.utf8.count <= 1_000 else {
                throw SyncProblem(status: 422, "the key of a \(table.name) row is longer than 1,000 bytes")
            }
            return DecodedPush(
                key: key, keyText: keyText, isDelete: isDelete, changes: isDelete ? [:] : changes,
                base: base, editedAt: Swift.min(edited.microseconds, clock.now()), baseVersion: wire.baseVersion)
        } catch let problem as SyncProblem {
            throw problem
        } catch {
            throw SyncProblem(status: 422, "\(error)")
        }
    }

    /// Refuses text over the limit in Unicode scalars, and blobs over it in bytes.
    private func check(_ value: StoredValue, column: String, table: String) throws(SyncProblem) {
        switch value {
        case .text(let text) where text.unicodeScalars.count > configuration.maximumTextScalars:
            throw SyncProblem(
                status: 422, "\(table).\(column) is longer than \(configuration.maximumTextScalars) characters")
        case .blob(let data) where data.count > configuration.maximumBlobBytes:
            throw SyncProblem(status: 422, "\(table).\(column) is larger than \(configuration.maximumBlobBytes) bytes")
        default:
            break
        }
    }

    /// A fingerprint of a push to `table`: FNV-1a (64 bits) of the table name and the push
    /// encoded with sorted keys, so the same request matches whatever its JSON spacing.
    ///
    /// The base version is left out: a client sending the same edit again may have pulled the
    /// row meanwhile (its own edit, whose answer it lost), and it is still the same request.
    static func fingerprint(_ push: SyncProtocol.Push, table: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var edit = push
        edit.baseVersion = nil
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Data(table.utf8) + [0] + (try encoder.encode(edit)) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }

    /// The field times of a row, by column, in microseconds since 2001, and its version (0 for
    /// a row no logged write has changed).
    static func fieldTimes(_ table: String, _ keyText: String, in tx: Transaction) async throws
        -> (times: [String: Int64], version: Int, columns: [String: Int])
    {
        guard let stored = try await tx.repository(SyncFieldTimes.self).find(table, keyText) else {
            return ([:], 0, [:])
        }
        return (try stored.decoded, stored.version, try stored.decodedVersions)
    }
}

extension TypedServedTable {
    func apply(_ push: DecodedPush, caller: Caller, in tx: Transaction, server: SyncServer<Caller>) async throws
        -> PushOutcome
    {
        let schema = Root.schema
        let table = schema.table
        let repository = tx.repository(Root.self)
        let byKey = Filter<Root>(PredicateNode.matching(keys: [push.key], primaryKey: table.primaryKey))
        let scope = scopeFilter(caller)
        let visible = byKey && scope
        let described = "\(table.name) \(push.keyText)"
        // A read-only table answers every push alike, whatever its key names.
        guard let authorize else {
            throw SyncProblem(status: 403, "\(table.name) takes no pushes (its sync table declares no authorize hook)")
        }
        func allowed(_ write: SyncWrite<Root>) async throws {
            guard try await authorize(write, caller) else {
                throw SyncProblem(status: 403, "this caller may not \(write.kind) \(described)")
            }
        }
        func stillInScope() async throws {
            guard try await repository.count(where: visible) == 1 else {
                throw SyncProblem(status: 403, "the push would move \(described) out of this caller's scope")
            }
        }
        func decode(_ values: [String: StoredValue]) throws(SyncProblem) -> Root {
            var row: [StoredValue] = []
            for column in table.columns {
                guard let value = values[column.name] else {
                    throw SyncProblem(status: 422, "a push to \(described) lacks column \(column.name)")
                }
                row.append(value)
            }
            do {
                return try schema.decode(row)
            } catch {
                throw SyncProblem(status: 422, "the push does not make a row of \(table.name): \(error)")
            }
        }
        // A row the caller cannot see is answered as an absent one: never shown, never changed.
        let current = try await repository.first(where: visible)
        guard let current else {
            let hidden = try await repository.count(where: byKey) > 0
            if push.isDelete {
                return try await answer(SyncProtocol.PushAnswer.applied, push, visible, in: tx)  // gone already: done
            }
            guard push.base == nil else {
                throw SyncProblem(status: 404, "no row \(described): it was deleted since the push's base")
            }
            var values = push.changes
            for (name, value) in zip(table.primaryKey, push.key) { values[name] = value }
            let missing = table.columns.map(\.name).filter { values[$0] == nil }
            guard missing.isEmpty else {
                throw SyncProblem(
                    status: 422,
                    "a push creating \(described) lacks column(s) \(missing.joined(separator: ", ")) (null is sent as null)"
                )
            }
            let row = try decode(values)
            try await allowed(SyncWrite(insert: row))
            // A key taken by a row outside the caller's scope: refused as a row created outside it is.
            guard !hidden else {
                throw SyncProblem(status: 403, "the push would move \(described) out of this caller's scope")
            }
            try await repository.insert(row)
            try await stillInScope()
            return try await answer(SyncProtocol.PushAnswer.applied, push, visible, in: tx)
        }
        let currentValues = schema.values(of: current)
        let names = table.columns.map(\.name)
        let keyColumns = Set(table.primaryKey)
        let checked =
            push.isDelete
            ? names.filter { !keyColumns.contains($0) }
            : names.filter { push.changes[$0] != nil && !keyColumns.contains($0) }
        let stale = checked.first { name in
            guard let base = push.base?[name], let index = names.firstIndex(of: name) else { return true }
            return !RowReads.same(base, currentValues[index], type: table.columns[index].type)
        }
        var reason = stale.map { stale in
            push.base?[stale] == nil
                ? "the push carries no base value of '\(stale)' of \(described): send the row it started from"
                : "'\(stale)' of \(described) changed on the server since the push's base"
        }
        // A column may have changed and come back to the same value (A, B, A): its version
        // tells. Columns the push does not change may have moved on: merged, not a conflict.
        if reason == nil, let baseVersion = push.baseVersion {
            let versions = try await SyncServer<Caller>.fieldTimes(table.name, push.keyText, in: tx).columns
            if let moved = checked.first(where: { (versions[$0] ?? 0) > baseVersion }) {
                reason =
                    "'\(moved)' of \(described) was written on the server after the push's base "
                    + "(version \(baseVersion), written at \(versions[moved] ?? 0))"
            }
        }
        var target = push.changes
        var deletes = push.isDelete
        var status = SyncProtocol.PushAnswer.applied
        if let reason {
            guard let conflicts else {
                return try await answer(
                    SyncProtocol.PushAnswer.conflict, push, visible, in: tx, status: 409, message: reason)
            }
            // The table's policy settles it here; the outcome is logged, so the client pulls it.
            // The base is the server's row where the push sent none of a column (what the client
            // did not see, it did not change), the local row the base with the push's changes.
            let times = try await SyncServer<Caller>.fieldTimes(table.name, push.keyText, in: tx).times
            var baseValues = Dictionary(uniqueKeysWithValues: zip(names, currentValues))
            baseValues.merge(push.base ?? [:]) { _, sent in sent }
            var localValues = baseValues
            localValues.merge(push.changes) { _, new in new }
            let conflict = Conflict(
                base: push.base == nil ? nil : try decode(baseValues), local: try decode(localValues), remote: current,
                changedColumns: checked, localEditedAt: Date(microseconds: push.editedAt),
                remoteFieldTimes: times.mapValues { Date(microseconds: $0) }, isDelete: push.isDelete)
            status = "resolved"
            if push.isDelete {
                if try !conflicts.deleteStands(conflict) { deletes = false }
            } else {
                let resolved = schema.values(of: try conflicts.resolve(conflict))
                var changes: [String: StoredValue] = [:]
                for (index, column) in table.columns.enumerated() where !keyColumns.contains(column.name) {
                    if !RowReads.same(resolved[index], currentValues[index], type: column.type) {
                        changes[column.name] = resolved[index]
                    }
                }
                target = changes
            }
            try await touch(push, before: currentValues, in: tx)
        }
        if deletes {
            try await allowed(SyncWrite(delete: current))
            _ = try await repository.remove(where: byKey)
        } else if !push.isDelete, !target.isEmpty {
            var values = Dictionary(uniqueKeysWithValues: zip(names, currentValues))
            values.merge(target) { _, new in new }
            let after = try decode(values)
            // The columns the write changes: the policy's row may change some the push did not send.
            try await allowed(SyncWrite(update: current, to: after, columns: names.filter { target[$0] != nil }))
            try await repository.upsert(after)
            try await stillInScope()
        }
        return try await answer(status, push, visible, in: tx)
    }

    /// Logs the row as changed (with nothing written): a conflict settled on the server may leave
    /// the pushing client's copy unlike the server's, and its next pull must bring the row.
    private func touch(_ push: DecodedPush, before: [StoredValue], in tx: Transaction) async throws {
        let head = try await ChangeLog.take(1, in: tx)
        let names = Root.schema.table.columns.map(\.name)
        try await tx.repository(SyncLogEntry.self).insert(
            SyncLogEntry(
                table: Root.schema.tableName, sequence: head.head, key: push.keyText, isDelete: false,
                before: try SyncJSON.valuesText(Dictionary(uniqueKeysWithValues: zip(names, before)))))
    }

    /// The answer: the row as the caller may see it now (none when it may not) and its field times.
    private func answer(
        _ result: String, _ push: DecodedPush, _ visible: Filter<Root>, in tx: Transaction, status: Int = 200,
        message: String? = nil
    ) async throws -> PushOutcome {
        let table = Root.schema.table
        let row = try await tx.repository(Root.self).first(where: visible)
        let clock =
            row == nil
            ? (times: [:], version: 0, columns: [:])
            : try await SyncServer<Caller>.fieldTimes(table.name, push.keyText, in: tx)
        return PushOutcome(
            status: status,
            answer: SyncProtocol.PushAnswer(
                status: result, row: row.map { SyncProtocol.row(Root.schema.values(of: $0), of: table) },
                fieldTimes: clock.times.mapValues { SyncProtocol.timestamp(Date(microseconds: $0)) }, message: message,
                version: row == nil ? nil : clock.version))
    }
}
