import Depot
import DepotSyncHummingbird
import DepotSyncServer
import Foundation
import Hummingbird

/// Who calls the airports' sync routes: a holder of a write token, or an anonymous reader; on
/// `/sync/country/{code}/…`, the one country they sync.
public struct AirportsCaller: SyncCaller {
    /// `writer` for a write-token holder (their idempotency keys are shared), `reader` otherwise.
    public var id: String
    /// Whether the caller sent a valid write token.
    public var canWrite: Bool
    /// The country synced (`/sync/country/{code}`), or `nil` for every airport.
    public var country: String?
}

extension AirportsServer {
    /// The airports' sync server over `store`: the whole of the example's sync code is this
    /// declaration. Every caller sees every airport (or, on `/sync/country/{code}`, that country's);
    /// holders of a write token may push (401 without one, 403 on a read-only server).
    ///
    /// - Throws: What ``SyncServer/open(store:tables:configuration:)`` throws.
    public static func syncServer(
        store: any Store, limits: Limits = Limits(), access: Access = .readOnly
    ) async throws -> SyncServer<AirportsCaller> {
        try await SyncServer.open(
            store: store,
            tables: [
                .table(
                    Airport.self, scope: { caller in caller.country.map { \.country == $0 } ?? .all },
                    authorize: { write, caller in
                        try access.authorizePush(caller)
                        // The API's rules hold for pushes as for PATCH: names, texts, coordinates.
                        if let airport = write.after {
                            do {
                                try AirportPatchBody.check(
                                    AirportRecord(airport), maximumTextLength: limits.maximumTextLength)
                            } catch let problem as APIProblem {
                                throw SyncProblem(status: 422, problem.message)
                            }
                        }
                        return true
                    })
            ],
            configuration: .init(
                logLength: limits.changeLogLength, maximumPageSize: AirportsController.maximumLimit,
                maximumTextScalars: limits.maximumTextLength))
    }
}

extension AirportsServer.Access {
    /// The caller of a sync request: a writer with a valid token, a reader without one, `nil`
    /// (401) with a wrong one.
    func caller(_ authorization: String?, country: String?) -> AirportsCaller? {
        // A read-only server has no token to check: everyone reads, nobody pushes.
        guard let authorization, !writeTokens.isEmpty else {
            return AirportsCaller(id: "reader", canWrite: false, country: country)
        }
        guard (try? authorizeWrite(authorization)) != nil else { return nil }
        return AirportsCaller(id: "writer", canWrite: true, country: country)
    }

    /// Refuses a caller who may not push: 403 on a read-only server, 401 without a write token.
    func authorizePush(_ caller: AirportsCaller) throws {
        guard !writeTokens.isEmpty else {
            throw SyncProblem(status: 403, "this server is read-only: start it with a write token to take writes")
        }
        guard caller.canWrite else {
            throw SyncProblem(status: 401, "a write needs Authorization: Bearer <write token>")
        }
    }
}

extension AirportsController {
    /// The sync routes, under `/sync` (every airport) and `/sync/country/{code}` (one country).
    func addSyncRoutes(to router: Router<AirportsRequestContext>) {
        let access = self.access
        let maximumTextLength = limits.maximumTextLength
        router.addRoutes(
            sync.routes(context: AirportsRequestContext.self) { request, _ in
                access.caller(request.headers[.authorization], country: nil)
            }, atPath: "/sync")
        router.addRoutes(
            sync.routes(context: AirportsRequestContext.self) { request, context in
                guard let raw = context.parameters.get("country") else {
                    throw SyncProblem(status: 404, "the path names no country")
                }
                guard let country = raw.removingPercentEncoding else {
                    throw SyncProblem(status: 400, "the path's country '\(raw.prefix(40))' is not percent-encoded text")
                }
                guard !country.isEmpty, country.unicodeScalars.count <= maximumTextLength else {
                    throw SyncProblem(status: 400, "the path's country must be 1 to \(maximumTextLength) characters")
                }
                return access.caller(request.headers[.authorization], country: country)
            }, atPath: "/sync/country/:country")
    }
}
