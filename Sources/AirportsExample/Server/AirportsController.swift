import Depot
import Foundation
import Hummingbird
import NIOCore

/// The API's routes, as a Hummingbird route collection: each handler a function of the request to
/// a value Hummingbird encodes (``AirportsRequestContext``'s JSON) or an ``APIProblem`` it answers;
/// any other error becomes a 500 with an incident number (``IncidentMiddleware``). The sync routes
/// are in `AirportsController+Sync.swift`.
struct AirportsController: Sendable {
    let store: any Store
    let limits: AirportsServer.Limits
    var access = AirportsServer.Access.readOnly

    /// Largest `limit` a list or a changes page takes.
    static let maximumLimit = 10_000
    /// Largest `PATCH` body.
    static let maximumBody = 64 << 10

    /// Every route of the API.
    var routes: RouteCollection<AirportsRequestContext> {
        let routes = RouteCollection(context: AirportsRequestContext.self)
        routes.get("airports") { request, _ in try await list(request) }
        routes.get("airports/:icao") { _, context in try await airport(icao(context)) }
        routes.patch("airports/:icao") { request, context in try await patch(icao(context), request) }
        routes.get("dataset") { _, _ in try await dataset() }
        routes.get("changes") { request, _ in try await changes(request) }
        routes.get("feed") { request, _ in try await feed(request) }
        routes.post("airports/:icao/changes") { request, context in try await push(icao(context), request) }
        routes.get("health") { _, _ in
            let (status, body) = await health()
            return AirportsJSON.response(status, body)
        }
        return routes
    }

    /// `GET /health`: 200 `{"status":"ok"}` when the store answers a read, else 503
    /// `{"status":"unavailable","error":…}` with an incident number (the error goes to the log),
    /// for a load balancer or an orchestrator's probe.
    func health() async -> (status: HTTPResponse.Status, body: [String: String]) {
        do {
            _ = try await store.repository(AirportDataset.self).find(AirportDataset.current)
            return (.ok, ["status": "ok"])
        } catch {
            let incident = IncidentMiddleware<AirportsRequestContext>.incident("health check failed", error)
            return (
                .serviceUnavailable,
                ["status": "unavailable", "error": "the store did not answer (incident \(incident))"]
            )
        }
    }

    // MARK: Handlers

    func list(_ request: Request) async throws -> [AirportRecord] {
        let parameters = try QueryParameters(
            request.uri.query, allowed: ["country", "q", "near", "min_elevation", "after", "limit"],
            maximumTextLength: limits.maximumTextLength)
        var query = AirportQuery(limit: try parameters.limit(default: 100))
        query.country = try parameters.text("country")
        query.contains = try parameters.text("q")
        query.after = try parameters.text("after")
        if let near = try parameters.text("near") {
            guard let point = Coordinate(parsing: near) else {
                throw APIProblem.badRequest(
                    "near must be LAT,LON in degrees (latitude -90…90, longitude -180…180), got '\(near)'")
            }
            guard query.after == nil else {
                throw APIProblem.badRequest("after pages results in icao order; it cannot be combined with near")
            }
            query.near = point
        }
        if let text = try parameters.text("min_elevation") {
            guard let value = Double(text), value.isFinite else {
                throw APIProblem.badRequest("min_elevation must be a number of feet, got '\(text)'")
            }
            query.minimumElevation = value
        }
        return try await query.run(on: store.repository(Airport.self)).map {
            AirportRecord($0.airport, distanceKilometers: $0.distanceKilometers)
        }
    }

    func airport(_ icao: String) async throws -> AirportRecord {
        guard let airport = try await store.repository(Airport.self).find(icao) else {
            throw APIProblem(status: .notFound, message: "no airport with icao '\(icao)'")
        }
        return AirportRecord(airport)
    }

    func patch(_ icao: String, _ request: Request) async throws -> AirportRecord {
        try access.authorizeWrite(request.headers[.authorization])
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumBody)
        } catch {
            throw APIProblem(status: .contentTooLarge, message: "the body is larger than \(Self.maximumBody) bytes")
        }
        let record = try AirportPatchBody.decode(
            Data(buffer: body), icao: icao, maximumTextLength: limits.maximumTextLength)
        let members = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        let hasChanges = record != AirportRecord(icao: icao)
        // The patch writes only the fields it carries (no read-modify-write to lose). Change-log
        // writers take turns: each first rewrites the dataset row as it is, which holds that row's
        // lock until commit (PostgreSQL; SQLite has one writer anyway), so the next revision read
        // after it is free. Should another writer still take the number first (a dataset row
        // replaced by an import), the insert fails on the key and the whole write runs again.
        let updated = try await retryingTakenRevision(attempts: 5) {
            try await store.write { tx -> Airport? in
                let airports = tx.repository(Airport.self)
                guard let current = try await airports.find(icao) else { return nil }
                guard hasChanges else { return current }
                let datasets = tx.repository(AirportDataset.self)
                if let dataset = try await datasets.find(AirportDataset.current) { try await datasets.upsert(dataset) }
                try await airports.persist([record], mapper: AirportRecordMapper())
                try await AirportFieldTimes.touch(record, at: Date().timeIntervalSince1970, in: tx)
                let changes = tx.repository(AirportChange.self)
                let head = try await changes.first(orderBy: [.descending(\.revision)])?.revision ?? 0
                try await changes.insert(AirportChange(revision: head + 1, icao: icao, members: members))
                // The log keeps the newest changes only; a client further behind syncs in full.
                try await changes.remove(where: \.revision <= head + 1 - limits.changeLogLength)
                return try await airports.find(icao)
            }
        }
        guard let updated else { throw APIProblem(status: .notFound, message: "no airport with icao '\(icao)'") }
        return AirportRecord(updated)
    }

    /// The tables whose keys a writer taking the next revision may find taken.
    static let revisionTables = [AirportChange.schema.tableName, AirportPush.schema.tableName]

    /// Runs `body` again (up to `attempts` times in all) while it fails because the change log's
    /// next revision was taken by another writer.
    func retryingTakenRevision<T>(attempts: Int, _ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as DepotError
                where error.kind == .constraintViolation
                && Self.revisionTables.contains(where: { $0 == error.table })
                && attempt < attempts
            {
                attempt += 1
            }
        }
    }

    /// The current import's epoch. The dataset row is created when the server starts and replaced
    /// by an import; a store without it (removed underneath) is named, not answered with an empty
    /// epoch that clients would take as a dataset of their own.
    ///
    /// - Throws: `DepotError` of kind `.storage` naming the missing row.
    func currentEpoch() async throws -> String {
        guard let dataset = try await store.repository(AirportDataset.self).find(AirportDataset.current) else {
            throw DepotError(
                .storage,
                "the dataset row '\(AirportDataset.current)' of \(AirportDataset.schema.tableName) is missing: "
                    + "restart the server (it creates one) or run airports import",
                table: AirportDataset.schema.tableName)
        }
        return dataset.epoch
    }

    func dataset() async throws -> DatasetInfo {
        let epoch = try await currentEpoch()
        // An empty change log is at revision 0.
        let head = try await store.repository(AirportChange.self).first(orderBy: [.descending(\.revision)])
        return DatasetInfo(
            epoch: epoch, revision: head?.revision ?? 0,
            airports: try await store.repository(Airport.self).count())
    }

    func changes(_ request: Request) async throws -> ChangesPage {
        let parameters = try QueryParameters(
            request.uri.query, allowed: ["since", "country", "limit"], maximumTextLength: limits.maximumTextLength)
        guard let sinceText = try parameters.text("since") else {
            throw APIProblem.badRequest("since is required: the revision the client has (0 for all changes)")
        }
        guard let since = Int(sinceText), since >= 0 else {
            throw APIProblem.badRequest("since must be a revision (a whole number ≥ 0), got '\(sinceText)'")
        }
        let limit = try parameters.limit(default: 1_000)
        let country = try parameters.text("country")
        let epoch = try await currentEpoch()
        let rows = try await store.repository(AirportChange.self).fetch(
            where: \.revision > since, orderBy: [.ascending(\.revision)], limit: limit)
        // Revisions are consecutive: a first one past `since + 1` means the log dropped changes the
        // client has not seen (read in the same statement as the page, so a prune in between
        // cannot hide one), and it cannot catch up from here.
        if let first = rows.first?.revision, first - 1 > since {
            return ChangesPage(epoch: epoch, revision: since, more: false, changes: [], pruned: true)
        }
        var records: [AirportRecord] = []
        var deleted: [String] = []
        for row in rows {
            let members = Data(row.members.utf8)
            do {
                // A deletion is logged as `{"deleted": true, "icao": …}`.
                if try JSONDecoder().decode(Tombstone.self, from: members).deleted == true {
                    deleted.append(row.icao)
                    records.removeAll { $0.icao == row.icao }
                } else {
                    records.append(try JSONDecoder().decode(AirportRecord.self, from: members))
                }
            } catch {
                throw DepotError(
                    .decodingFailed, "change \(row.revision) of '\(row.icao)' is not an airport record: \(error)",
                    table: AirportChange.schema.tableName, column: "members")
            }
        }
        if let country {
            // Changes of airports in the country, and every change that moves an airport. Deletions
            // all go (the airport's country is gone with it): a client drops the ones it has.
            let keys = Set(records.map(\.icao))
            let inCountry = try await store.repository(Airport.self).fetch(
                where: .in(\.icao, keys) && \.country == country)
            let kept = Set(inCountry.map(\.icao))
            records = records.filter { kept.contains($0.icao) || $0.$country.isPresent }
        }
        return ChangesPage(
            epoch: epoch, revision: rows.last?.revision ?? since, more: rows.count == limit, changes: records,
            deleted: deleted)
    }

    // MARK: Plumbing

    func icao(_ context: AirportsRequestContext) throws -> String {
        let raw = context.parameters.get("icao") ?? ""
        let icao = raw.removingPercentEncoding ?? raw
        guard !icao.isEmpty else { throw APIProblem.badRequest("the path lacks an icao") }
        try APIProblem.checkText(icao, named: "the icao in the path", maximumLength: limits.maximumTextLength)
        return icao
    }
}

// What the handlers answer, encoded by the request context's encoder.
extension AirportRecord: ResponseEncodable {}
extension DatasetInfo: ResponseEncodable {}
extension ChangesPage: ResponseEncodable {}
extension FeedResponse: ResponseEncodable {}

/// The one member a change-log row of a deletion has besides `icao`.
private struct Tombstone: Decodable {
    var deleted: Bool?
}
