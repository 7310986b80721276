import Depot
import DepotHTTP
import Foundation

extension SyncedEntity {
    /// `Root` synced with a server that speaks ``SyncProtocol`` (`DepotSyncServer`): its feed at
    /// `{path}/{table}/feed`, its pushes to `{path}/{table}/push`. Nothing else to write.
    ///
    /// ```swift
    /// let engine = SyncEngine(store: store, client: APIClient(baseURL: api), entities: [
    ///     .entity(Note.self, server: "/sync", conflicts: .lastWriterWins)
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The entity; the server serves the same table (same columns, same key).
    ///   - path: Where the server's sync routes are, relative to the client's base URL.
    ///   - pageSize: Rows per feed page: at most the server's maximum page size, which refuses a larger one.
    ///   - conflicts: What to do when a pushed edit meets a changed row (the server's row wins by
    ///     default).
    public static func entity<Root: Entity>(
        _ type: Root.Type, server path: String, pageSize: Int = 1_000, conflicts: ConflictPolicy<Root> = .serverWins
    ) -> SyncedEntity {
        .entity(
            type, feed: SyncServerFeed<Root>(path: path, pageSize: pageSize), push: SyncServerPush<Root>(path: path),
            conflicts: conflicts)
    }
}

/// The feed of a table served by `DepotSyncServer`: `GET {path}/{table}/feed` (``SyncProtocol``).
public struct SyncServerFeed<Root: Entity>: SyncFeed {
    /// Where the server's sync routes are, relative to the client's base URL (`/sync`).
    public var path: String
    /// Rows per page.
    public var pageSize: Int

    /// The feed of `Root`'s table under `path`, `pageSize` rows a page.
    public init(path: String, pageSize: Int = 1_000) {
        self.path = path
        self.pageSize = pageSize
    }

    /// The table's name and the path: a store synced from another path (another scope) keeps a
    /// cursor of its own there, and its first pull from a new one is a full copy.
    public var name: String { "\(Root.schema.tableName) \(path)" }

    /// `GET {path}/{table}/feed?limit=…&cursor=…`.
    public func request(after cursor: String?) -> AnyEndpoint<SyncProtocol.FeedPage> {
        var query = [URLQueryItem(name: "limit", value: String(pageSize))]
        // No cursor is a request of its own (a full copy), not an empty one.
        if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        return AnyEndpoint(.get, SyncRoutes.path(path, table: Root.schema.tableName, "feed"), query: query)
    }

    /// The page's rows (whole) and deleted keys.
    ///
    /// - Throws: `DepotError` naming the table and column when a row does not fit the entity.
    public func page(from response: SyncProtocol.FeedPage) throws -> FeedPage<Root> {
        if response.expired { return .expired }
        let table = Root.schema.table
        let rows = try response.rows.map { row in
            let values = try SyncProtocol.values(row, of: table)
            let key = try table.primaryKey.map { name in
                guard let value = values[name], !value.isNull else {
                    throw DepotError(
                        .missingColumns, "a row of \(table.name) in the feed lacks its key column \(name)",
                        table: table.name, column: name)
                }
                return value
            }
            return Patch<Root>(
                key: key, values: table.columns.compactMap { column in values[column.name].map { (column.name, $0) } })
        }
        return FeedPage(
            changes: rows, deletions: try response.deleted.map { try SyncProtocol.key($0, of: table) },
            cursor: response.cursor, hasMore: response.more, versions: response.versions)
    }
}

/// Local edits of a table pushed to `DepotSyncServer`: `POST {path}/{table}/push` (``SyncProtocol``).
public struct SyncServerPush<Root: Entity>: SyncPush {
    /// Where the server's sync routes are, relative to the client's base URL (`/sync`).
    public var path: String

    /// Pushes to `Root`'s table under `path`.
    public init(path: String) { self.path = path }

    /// The request carrying `change`, its base row and its idempotency key.
    public func request(for change: OutgoingChange<Root>) throws -> AnyEndpoint<PushResult<Root>> {
        let table = Root.schema.table
        let body = SyncProtocol.Push(
            key: SyncProtocol.key(change.key, of: table), operation: change.operation.rawValue,
            changes: SyncProtocol.row(change.changes, of: table),
            base: change.baseValues.map { SyncProtocol.row($0, of: table) },
            editedAt: SyncProtocol.timestamp(change.editedAt), baseVersion: change.baseVersion)
        let path = SyncRoutes.path(path, table: table.name, "push")
        return AnyEndpoint(
            .post, path, headers: ["Idempotency-Key": change.idempotencyKey], body: .json(body), isIdempotent: true,
            acceptedStatuses: 200..<410,
            decoder: ResponseDecoder { response, decoder in
                switch response.status {
                case 200..<300:
                    // The row's version after the push (none when the row is gone or hidden).
                    let answer = try? decoder.decode(SyncProtocol.PushAnswer.self, from: response.body)
                    return answer?.version.map { .appliedAt(version: $0) } ?? .applied
                case 409:
                    let answer = try decoder.decode(SyncProtocol.PushAnswer.self, from: response.body)
                    guard let row = answer.row else {
                        throw HTTPError(.invalidResponse, endpoint: "POST \(path)")
                    }
                    let values = try SyncProtocol.values(row, of: table)
                    let remote = try Root.schema.decode(
                        table.columns.map { column in
                            guard let value = values[column.name] else {
                                throw HTTPError(
                                    .invalidResponse, endpoint: "POST \(path)",
                                    detail: "the conflict's row lacks column \(column.name)")
                            }
                            return value
                        })
                    var times: [String: Date] = [:]
                    for (column, text) in answer.fieldTimes {
                        guard let date = SyncProtocol.date(text) else {
                            throw HTTPError(.invalidResponse, endpoint: "POST \(path)")
                        }
                        times[column] = date
                    }
                    return .conflict(RemoteRow(remote, fieldTimes: times, version: answer.version))
                default:
                    throw StatusPolicy().error(for: response, endpoint: "POST \(path)")
                }
            })
    }
}

/// The paths of the sync routes.
package enum SyncRoutes {
    /// `{prefix}/{table}/{action}`, without a doubled slash.
    package static func path(_ prefix: String, table: String, _ action: String) -> String {
        let trimmed = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        let escaped = table.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? table
        return "\(trimmed)/\(escaped)/\(action)"
    }
}
