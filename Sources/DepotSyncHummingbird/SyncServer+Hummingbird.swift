import Depot
import DepotSync
import DepotSyncServer
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SyncServer {
    /// The sync routes on Hummingbird: `GET :table/feed` and `POST :table/push`, for every
    /// served table, to add under a path of your router.
    ///
    /// ```swift
    /// let router = Router()
    /// let routes = sync.routes(context: BasicRequestContext.self) { request, _ in
    ///     try await users.caller(request.headers[.authorization])   // your authentication: a User or nil
    /// }
    /// router.addRoutes(routes, atPath: "/sync")
    /// ```
    ///
    /// - Parameters:
    ///   - context: The request context of your router.
    ///   - caller: Who sends a request (from its `Authorization` header, say); `nil` answers 401
    ///     with `WWW-Authenticate: Bearer`. What it throws answers as Hummingbird answers it.
    /// - Returns: The routes; a `SyncProblem` answers `{"error": "…"}` with its status; other errors
    ///   (the store's) are thrown to your middleware, as any route's are (Hummingbird answers 500).
    public func routes<Context: RequestContext>(
        context: Context.Type,
        caller: @escaping @Sendable (Request, Context) async throws -> Caller?
    ) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.get(":table/feed") { request, context in
            try await self.answer {
                guard let who = try await caller(request, context) else { throw SyncProblem.unauthenticated }
                let table = try Self.table(context)
                let query = try SyncQuery(request.uri.query)
                let page = try await self.feed(
                    table: table, cursor: query.cursor, limit: query.limit, caller: who)
                return (.ok, try Self.json(page))
            }
        }
        routes.post(":table/push") { request, context in
            try await self.answer {
                guard let who = try await caller(request, context) else { throw SyncProblem.unauthenticated }
                let table = try Self.table(context)
                let body: ByteBuffer
                do {
                    body = try await request.body.collect(upTo: self.configuration.maximumBodyBytes)
                } catch {
                    throw SyncProblem(
                        status: 413, "the body is larger than \(self.configuration.maximumBodyBytes) bytes")
                }
                let key = HTTPField.Name("Idempotency-Key").flatMap { request.headers[$0] }
                let (status, answer) = try await self.push(
                    table: table, idempotencyKey: key, body: Data(buffer: body), caller: who)
                return (HTTPResponse.Status(code: status), try Self.json(answer))
            }
        }
        return routes
    }

    private func answer(_ body: () async throws -> (HTTPResponse.Status, Data)) async throws -> Response {
        do {
            let (status, data) = try await body()
            return Self.response(status, data)
        } catch let problem as SyncProblem {
            var response = Self.response(
                HTTPResponse.Status(code: problem.status), try Self.json(SyncProtocol.Problem(error: problem.message)))
            if problem.status == 401 { response.headers[.wwwAuthenticate] = "Bearer" }
            return response
        }
    }

    private static func table(_ context: some RequestContext) throws(SyncProblem) -> String {
        guard let table = context.parameters.get("table") else {
            throw SyncProblem(status: 404, "the route names no table")
        }
        return table
    }

    private static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    private static func response(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension SyncProblem {
    static let unauthenticated = SyncProblem(status: 401, "this route needs credentials (Authorization: Bearer …)")
}

/// A feed request's query: `cursor` and `limit`, nothing else.
struct SyncQuery {
    var cursor: String?
    var limit: Int?

    init(_ query: String?) throws(SyncProblem) {
        guard let query, !query.isEmpty else { return }
        // Split and decoded by hand: Foundation's URLComponents traps on a query it finds malformed.
        for part in query.split(separator: "&", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = pair[0].removingPercentEncoding,
                let value = (pair.count == 2 ? pair[1] : "").replacingOccurrences(of: "+", with: "%2B")
                    .removingPercentEncoding
            else {
                throw SyncProblem(status: 400, "the query '\(query.prefix(80))' is not percent-encoded text")
            }
            switch name {
            case "cursor":
                guard cursor == nil else { throw SyncProblem(status: 400, "cursor is given twice") }
                guard !value.isEmpty else {
                    throw SyncProblem(status: 400, "cursor is empty (leave it out to copy in full)")
                }
                cursor = value
            case "limit":
                guard limit == nil else { throw SyncProblem(status: 400, "limit is given twice") }
                guard let number = Int(value) else {
                    throw SyncProblem(status: 400, "limit must be a whole number, not '\(value.prefix(40))'")
                }
                limit = number
            default:
                throw SyncProblem(status: 400, "unknown query parameter '\(name.prefix(40))' (cursor, limit)")
            }
        }
    }
}
