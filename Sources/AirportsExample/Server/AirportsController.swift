import Depot
import DepotSyncServer
import Foundation
import Hummingbird
import NIOCore

/// The API's routes, as a Hummingbird route collection: each handler a function of the request to
/// a value Hummingbird encodes (``AirportsRequestContext``'s JSON) or an ``APIProblem`` it answers;
/// any other error becomes a 500 with an incident number (``IncidentMiddleware``). The sync routes
/// are DepotSyncServer's, declared in `AirportsController+Sync.swift`.
struct AirportsController: Sendable {
    /// The store, written through `sync.store` so that every write reaches synced clients.
    let sync: SyncServer<AirportsCaller>
    let limits: AirportsServer.Limits
    var access = AirportsServer.Access.readOnly

    /// The store to read from.
    var store: any Store { sync.base }

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
        routes.get("health") { _, _ in
            let (status, body) = await Self.health(of: store)
            return AirportsJSON.response(status, body)
        }
        return routes
    }

    /// `GET /health`: 200 `{"status":"ok"}` when the store answers a read, else 503
    /// `{"status":"unavailable","error":…}` with an incident number (the error goes to the log),
    /// for a load balancer or an orchestrator's probe.
    static func health(of store: any Store) async -> (status: HTTPResponse.Status, body: [String: String]) {
        do {
            _ = try await store.repository(Airport.self).first()
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
        let hasChanges = record != AirportRecord(icao: icao)
        // The patch writes only the fields it carries (no read-modify-write to lose), through the
        // sync server's store: the change is logged in the same transaction for synced clients.
        let updated = try await sync.store.write { tx -> Airport? in
            let airports = tx.repository(Airport.self)
            guard try await airports.find(icao) != nil else { return nil }
            if hasChanges { try await airports.persist([record], mapper: AirportRecordMapper()) }
            return try await airports.find(icao)
        }
        guard let updated else { throw APIProblem(status: .notFound, message: "no airport with icao '\(icao)'") }
        return AirportRecord(updated)
    }

    func dataset() async throws -> DatasetInfo {
        let position = try await sync.logPosition()
        return DatasetInfo(
            epoch: position.epoch, revision: position.sequence,
            airports: try await store.repository(Airport.self).count())
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
