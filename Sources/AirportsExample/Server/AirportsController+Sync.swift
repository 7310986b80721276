import Depot
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /feed?cursor=C&limit=N`: a change feed for offline-first clients (DepotSync's ``AirportsFeed``).
///
/// Without a cursor it starts a full copy (every airport, in icao order, `limit` per page); the
/// cursor it answers goes on from there and, once the copy is done, asks for the changes made
/// since the copy began. A cursor from another import, or older than the change log reaches,
/// answers `{"expired": true}`: the client copies in full again.
public struct FeedResponse: Codable, Sendable, Equatable {
    /// Whole records (a full copy) or partial ones (changes: only the members each carried).
    public var airports: [AirportRecord]
    /// Airports deleted (tombstones), by icao.
    public var deleted: [String]
    /// The cursor to ask from next.
    public var cursor: String
    /// Whether another page follows at once.
    public var more: Bool
    /// Whether the cursor asked from is too old (another import, or changes no longer logged).
    public var expired: Bool

    /// A page from its parts.
    public init(airports: [AirportRecord], deleted: [String], cursor: String, more: Bool, expired: Bool = false) {
        self.airports = airports
        self.deleted = deleted
        self.cursor = cursor
        self.more = more
        self.expired = expired
    }
}

/// `POST /airports/{icao}/changes`: one local edit of a client, pushed from its outbox.
///
/// `changes` carries the members the edit set, `base` the values they had when the client edited
/// them (what the server compares with its own to find a conflict), `edited_at` when (seconds since
/// 1970, for last-writer-wins), `delete` whether the edit removed the airport. The
/// `Idempotency-Key` header names the edit: a repeated delivery of the same request answers what
/// the first did; the key with another request (another body or airport) answers 422 naming it.
/// Keys are kept as long as the change log reaches, and forgotten by an import.
public struct PushBody: Codable, Sendable, Equatable {
    /// The members the edit set (with `icao`).
    public var changes: AirportRecord
    /// The values the edited members had before the edit, as the client saw them (with `icao`).
    public var base: AirportRecord?
    /// When the edit was made, in seconds since 1970 (the client's clock; the server records the
    /// fields as written then, or at its own time now when that is earlier).
    public var editedAt: Double
    /// Whether the edit removed the airport.
    public var delete: Bool

    enum CodingKeys: String, CodingKey {
        case changes, base, delete
        case editedAt = "edited_at"
    }

    /// A body from its parts.
    public init(changes: AirportRecord, base: AirportRecord?, editedAt: Double, delete: Bool = false) {
        self.changes = changes
        self.base = base
        self.editedAt = editedAt
        self.delete = delete
    }
}

/// The answer to a push: 200 with the stored airport and the revision, or 409 with the server's
/// airport and when each of its members was last written (`field_times`, seconds since 1970).
public struct PushAnswer: Codable, Sendable, Equatable {
    /// The airport as the server holds it now (`null` after a delete).
    public var airport: AirportRecord?
    /// The change-log revision of the applied change (0 for a conflict or a change of nothing).
    public var revision: Int
    /// When each member was last written by a push, by wire name (absent: never).
    public var fieldTimes: [String: Double]
    /// Why the push was not applied (409).
    public var error: String?

    enum CodingKeys: String, CodingKey {
        case airport, revision, error
        case fieldTimes = "field_times"
    }
}

/// A push the server applied, by idempotency key: a repeated delivery of the same request answers
/// the stored answer; the key with another request is refused. Kept as long as the change log
/// reaches (pruned with it), and cleared by an import.
struct AirportPush: Entity, Equatable {
    var idempotencyKey: String
    var icao: String
    /// A fingerprint of the request the key was used for (``AirportsController/fingerprint(_:icao:)``).
    var request: String
    /// The change-log revision the push made.
    var revision: Int
    var answer: String

    static let schema = Schema<AirportPush>("airport_push_ledger", primaryKey: \.idempotencyKey) {
        Column(\.idempotencyKey, "idempotency_key")
        Column(\.icao, "icao")
        Column(\.request, "request")
        Column(\.revision, "revision")
        Column(\.answer, "answer")
    }
}

/// When each member of an airport was last written by a push (JSON: wire name → seconds since 1970).
struct AirportFieldTimes: Entity, Equatable {
    var icao: String
    var times: String

    static let schema = Schema<AirportFieldTimes>("airport_field_times", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.times, "times")
    }
}

extension AirportFieldTimes {
    static func read(_ icao: String, in tx: Transaction) async throws -> [String: Double] {
        try await tx.repository(AirportFieldTimes.self).find(icao).map {
            try JSONDecoder().decode([String: Double].self, from: Data($0.times.utf8))
        } ?? [:]
    }

    /// Records that `record`'s present members were written at `time` (a later time already
    /// recorded stays); returns the airport's times.
    @discardableResult
    static func touch(_ record: AirportRecord, at time: Double, in tx: Transaction) async throws -> [String: Double] {
        var times = try await read(record.icao, in: tx)
        for member in record.presentMembers where member != "icao" {
            times[member] = Swift.max(times[member] ?? -.infinity, time)
        }
        let text = String(decoding: try JSONEncoder().encode(times), as: UTF8.self)
        try await tx.repository(AirportFieldTimes.self).upsert(AirportFieldTimes(icao: record.icao, times: text))
        return times
    }
}

extension AirportsController {
    /// Marks a change-log row as a deletion of its airport.
    static let deletedMember = "deleted"

    func feed(_ request: Request) async throws -> FeedResponse {
        let parameters = try QueryParameters(
            request.uri.query, allowed: ["cursor", "limit"], maximumTextLength: limits.maximumTextLength)
        let limit = try parameters.limit(default: 5_000)
        let epoch = try await currentEpoch()
        guard let cursor = try parameters.text("cursor") else {
            let head = try await store.repository(AirportChange.self).max(\.revision) ?? 0
            return try await copyPage(epoch: epoch, revision: head, after: nil, limit: limit)
        }
        let parts = cursor.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, let revision = Int(parts[2]), revision >= 0 else {
            throw APIProblem.badRequest("cursor '\(cursor)' is not one this server gave")
        }
        guard parts[1] == epoch else {
            return FeedResponse(airports: [], deleted: [], cursor: "", more: false, expired: true)
        }
        switch (parts[0], parts.count) {
        case ("copy", 4): return try await copyPage(epoch: epoch, revision: revision, after: parts[3], limit: limit)
        case ("changes", 3): return try await changesPage(epoch: epoch, since: revision, limit: limit)
        default: throw APIProblem.badRequest("cursor '\(cursor)' is not one this server gave")
        }
    }

    private func copyPage(epoch: String, revision: Int, after: String?, limit: Int) async throws -> FeedResponse {
        let airports = try await store.repository(Airport.self).fetch(
            where: after.map { \.icao > $0 } ?? .all, orderBy: [.ascending(\.icao)], limit: limit)
        guard airports.count == limit, let last = airports.last else {
            // The copy is done: next, the changes made since it began.
            return FeedResponse(
                airports: airports.map { AirportRecord($0) }, deleted: [], cursor: "changes:\(epoch):\(revision)",
                more: true)
        }
        return FeedResponse(
            airports: airports.map { AirportRecord($0) }, deleted: [], cursor: "copy:\(epoch):\(revision):\(last.icao)",
            more: true)
    }

    private func changesPage(epoch: String, since: Int, limit: Int) async throws -> FeedResponse {
        let rows = try await store.repository(AirportChange.self).fetch(
            where: \.revision > since, orderBy: [.ascending(\.revision)], limit: limit)
        if let first = rows.first?.revision, first - 1 > since {
            return FeedResponse(airports: [], deleted: [], cursor: "", more: false, expired: true)
        }
        var records: [AirportRecord] = []
        var deleted: [String] = []
        for row in rows {
            let data = Data(row.members.utf8)
            if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                object[Self.deletedMember] as? Bool == true
            {
                records.removeAll { $0.icao == row.icao }
                deleted.append(row.icao)
                continue
            }
            do {
                records.append(try JSONDecoder().decode(AirportRecord.self, from: data))
            } catch {
                throw DepotError(
                    .decodingFailed, "change \(row.revision) of '\(row.icao)' is not an airport record: \(error)",
                    table: AirportChange.schema.tableName, column: "members")
            }
        }
        let last = rows.last?.revision ?? since
        return FeedResponse(
            airports: records, deleted: deleted, cursor: "changes:\(epoch):\(last)", more: rows.count == limit)
    }

    func push(_ icao: String, _ request: Request) async throws -> Response {
        try access.authorizeWrite(request.headers[.authorization])
        guard let name = HTTPField.Name("Idempotency-Key"), let key = request.headers[name], !key.isEmpty else {
            throw APIProblem.badRequest("a push needs an Idempotency-Key header")
        }
        try APIProblem.checkText(key, named: "the Idempotency-Key", maximumLength: limits.maximumTextLength)
        let data: ByteBuffer
        do {
            data = try await request.body.collect(upTo: Self.maximumBody)
        } catch {
            throw APIProblem(status: .contentTooLarge, message: "the body is larger than \(Self.maximumBody) bytes")
        }
        let body: PushBody
        do {
            body = try JSONDecoder().decode(PushBody.self, from: Data(buffer: data))
        } catch {
            throw APIProblem.badRequest("the body is not a push (changes, base, edited_at, delete): \(error)")
        }
        guard body.changes.icao == icao, body.base.map({ $0.icao == icao }) ?? true else {
            throw APIProblem.badRequest("the body's icao must be the path's, '\(icao)'")
        }
        guard body.editedAt.isFinite else { throw APIProblem.badRequest("edited_at must be a number of seconds") }
        try AirportPatchBody.check(body.changes, maximumTextLength: limits.maximumTextLength)
        let members = String(decoding: try JSONEncoder().encode(body.changes), as: UTF8.self)
        let request = try Self.fingerprint(body, icao: icao)
        let changeLogLength = limits.changeLogLength
        let (status, answer): (HTTPResponse.Status, PushAnswer) = try await retryingTakenRevision(attempts: 5) {
            try await store.write { tx in
                // Pushes take turns from here: rewriting the dataset row holds its lock until commit
                // (PostgreSQL; SQLite has one writer anyway), so what is read below stays true.
                let datasets = tx.repository(AirportDataset.self)
                if let dataset = try await datasets.find(AirportDataset.current) { try await datasets.upsert(dataset) }
                let pushes = tx.repository(AirportPush.self)
                if let earlier = try await pushes.find(key) {
                    // The answer is the first delivery's only for the same request: a key reused for
                    // another edit would otherwise be told "applied" and the edit lost.
                    guard earlier.request == request else {
                        throw APIProblem(
                            status: .unprocessableContent,
                            message: "Idempotency-Key '\(key)' was used for another request (to \(earlier.icao)); "
                                + "a new edit needs a new key")
                    }
                    return (.ok, try JSONDecoder().decode(PushAnswer.self, from: Data(earlier.answer.utf8)))
                }
                let airports = tx.repository(Airport.self)
                guard let current = try await airports.find(icao) else {
                    // Deleting what is gone already is done; changing it is not possible.
                    if body.delete { return (.ok, PushAnswer(airport: nil, revision: 0, fieldTimes: [:], error: nil)) }
                    throw APIProblem(status: .notFound, message: "no airport with icao '\(icao)'")
                }
                let timesRepository = tx.repository(AirportFieldTimes.self)
                var times = try await AirportFieldTimes.read(icao, in: tx)
                let now = AirportRecord(current)
                // A conflict: a member the client changed (or, for a delete, any member) no longer
                // holds the value the client started from. A member missing from the base (or a
                // push without one) counts as stale: no blind overwrite of what the client never saw.
                let base = body.base ?? AirportRecord(icao: icao)
                let checked = body.delete ? AirportRecord.memberNames : body.changes.presentMembers
                if let stale = checked.first(where: { base.member($0) != now.member($0) }) {
                    let reason =
                        base.member(stale) == nil
                        ? "the push carries no base value of '\(stale)' of \(icao): send the value it started from"
                        : "'\(stale)' of \(icao) changed on the server since this edit's base"
                    return (.conflict, PushAnswer(airport: now, revision: 0, fieldTimes: times, error: reason))
                }
                let changes = tx.repository(AirportChange.self)
                let head = try await changes.max(\.revision) ?? 0
                let answer: PushAnswer
                if body.delete {
                    _ = try await airports.remove(icao)
                    _ = try await timesRepository.remove(icao)
                    try await changes.insert(
                        AirportChange(revision: head + 1, icao: icao, members: #"{"deleted":true,"icao":"\#(icao)"}"#))
                    answer = PushAnswer(airport: nil, revision: head + 1, fieldTimes: [:], error: nil)
                } else {
                    try await airports.persist([body.changes], mapper: AirportRecordMapper())
                    // A client's clock is trusted only up to the server's: a push dated in the future
                    // would otherwise win every later conflict on its fields (last writer wins).
                    let writtenAt = Swift.min(body.editedAt, Date().timeIntervalSince1970)
                    times = try await AirportFieldTimes.touch(body.changes, at: writtenAt, in: tx)
                    try await changes.insert(AirportChange(revision: head + 1, icao: icao, members: members))
                    let stored = try await airports.find(icao).map { AirportRecord($0) }
                    answer = PushAnswer(airport: stored, revision: head + 1, fieldTimes: times, error: nil)
                }
                // The log and the keys that made it keep the newest changes only.
                try await changes.remove(where: \.revision <= head + 1 - changeLogLength)
                try await pushes.remove(where: \.revision <= head + 1 - changeLogLength)
                let answerText = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
                try await pushes.insert(
                    AirportPush(
                        idempotencyKey: key, icao: icao, request: request, revision: head + 1, answer: answerText))
                return (.ok, answer)
            }
        }
        return AirportsJSON.response(status, answer)
    }
}

extension AirportsController {
    /// A fingerprint of a push to `icao`: FNV-1a (64 bits) of the path's icao and the body encoded
    /// with sorted keys, so the same edit sent again matches whatever its JSON spacing.
    static func fingerprint(_ body: PushBody, icao: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Data(icao.utf8) + [0] + (try encoder.encode(body)) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }
}

extension AirportRecord {
    /// The wire names of the members present (`icao` included).
    var presentMembers: [String] {
        Self.memberNames.filter { member($0) != nil }
    }

    /// A member's value as JSON-comparable text: `nil` when absent, `"null"` when null.
    func member(_ name: String) -> String? {
        func text<T: Encodable>(_ field: Field<T>) -> String? {
            switch field {
            case .absent: nil
            case .null: "null"
            case .value(let value): (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) }
            }
        }
        switch name {
        case "icao": return text(.value(icao))
        case "iata": return text($iata)
        case "name": return text($name)
        case "city": return text($city)
        case "subd": return text($subdivision)
        case "country": return text($country)
        case "elevation": return text($elevation)
        case "lat": return text($latitude)
        case "lon": return text($longitude)
        case "tz": return text($timeZone)
        case "lid": return text($localCode)
        default: return nil
        }
    }
}
