import AsyncHTTPClient
import BenchHarness
import Depot
import DepotPostgres
import DepotSync
import DepotSyncHummingbird
import DepotSyncServer
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO

// depot-sync-server-bench: DepotSyncServer's feed and push routes against the same work written by
// hand (Hummingbird handlers over PostgresNIO: the copy as keyset pages, a push as one transaction
// that locks a head row, checks the base, updates, logs and keeps the idempotency key), both on
// the same Hummingbird server on 127.0.0.1 and the same PostgreSQL (DEPOT_POSTGRES_URL), driven by
// 16 concurrent clients (AsyncHTTPClient). Interleaved rounds after a warm-up, medians; fresh
// tables every round.
// swift build -c release --package-path Benchmarks --scratch-path .build-bench --product depot-sync-server-bench
// .build-bench/release/depot-sync-server-bench [--rows 20000] [--clients 16] [--pushes 50] [--rounds 3] [--json]

let rowCount = BenchHarness.intOption("--rows") ?? 20_000
let clients = BenchHarness.intOption("--clients") ?? 16
let pushesPerClient = BenchHarness.intOption("--pushes") ?? 50
let rounds = BenchHarness.intOption("--rounds") ?? BenchHarness.defaultRounds
let pageSize = 500
let logger = Logger(label: "depot-sync-server-bench")

/// One row of the benchmark's table.
struct BenchItem: Entity, Equatable {
    var id: String
    var owner: String
    var title: String
    var count: Int

    static let schema = Schema<BenchItem>("bench_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.owner, "owner")
        Column(\.title, "title")
        Column(\.count, "count")
    }

    static func row(_ index: Int) -> BenchItem {
        BenchItem(
            id: String(format: "i%06d", index), owner: "owner \(index % 7)", title: "title \(index)", count: index)
    }
}

struct Caller: SyncCaller { var id: String }

/// A fresh schema per side and round.
func schemaName() -> String { "sync_bench_" + UUID().uuidString.prefix(8).lowercased() }

// MARK: - The hand-written side

/// What a careful engineer writes by hand for the same two routes.
struct RawSync: Sendable {
    let client: PostgresClient
    let schema: String

    func table(_ name: String) -> String { "\"\(schema)\".\"\(name)\"" }

    func execute(_ sql: String, on connection: PostgresConnection, _ binds: PostgresBindings = PostgresBindings())
        async throws -> PostgresRowSequence
    {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }

    func create(rows: [BenchItem]) async throws {
        try await client.withConnection { connection in
            _ = try await execute("CREATE SCHEMA \"\(schema)\"", on: connection).collect()
            _ = try await execute(
                "CREATE TABLE \(table("items")) (id text PRIMARY KEY, owner text NOT NULL, title text NOT NULL, "
                    + "count bigint NOT NULL)", on: connection
            ).collect()
            _ = try await execute(
                "CREATE TABLE \(table("head")) (id int PRIMARY KEY, head bigint NOT NULL)", on: connection
            ).collect()
            _ = try await execute("INSERT INTO \(table("head")) VALUES (1, 0)", on: connection).collect()
            _ = try await execute(
                "CREATE TABLE \(table("log")) (sequence bigint PRIMARY KEY, id text NOT NULL)", on: connection
            ).collect()
            _ = try await execute(
                "CREATE TABLE \(table("ledger")) (key text PRIMARY KEY, answer text NOT NULL, sequence bigint NOT NULL)",
                on: connection
            ).collect()
            var binds = PostgresBindings()
            binds.append(rows.map(\.id))
            binds.append(rows.map(\.owner))
            binds.append(rows.map(\.title))
            binds.append(rows.map { Int64($0.count) })
            _ = try await execute(
                "INSERT INTO \(table("items")) SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int8[])",
                on: connection, binds
            ).collect()
        }
    }

    func drop() async {
        _ = try? await client.withConnection { connection in
            try await execute("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE", on: connection).collect()
        }
    }

    struct Page: Codable { var rows: [Row]; var cursor: String; var more: Bool }
    struct Row: Codable { var id: String; var owner: String; var title: String; var count: Int }
    struct Push: Codable { var id: String; var title: String; var baseTitle: String }
    struct Answer: Codable { var status: String; var row: Row? }

    /// `GET /raw/feed?cursor=ID&limit=N`: the rows after `cursor` in key order.
    func feed(after cursor: String, limit: Int) async throws -> Page {
        try await client.withConnection { connection in
            var binds = PostgresBindings()
            binds.append(cursor)
            binds.append(Int64(limit))
            let rows = try await execute(
                "SELECT id, owner, title, count FROM \(table("items")) WHERE id > $1 ORDER BY id LIMIT $2",
                on: connection, binds)
            var page: [Row] = []
            for try await (id, owner, title, count) in rows.decode((String, String, String, Int64).self) {
                page.append(Row(id: id, owner: owner, title: title, count: Int(count)))
            }
            return Page(rows: page, cursor: page.last?.id ?? cursor, more: page.count == limit)
        }
    }

    /// `POST /raw/push`: one transaction holding the head row; the stored answer for a known key.
    func push(_ push: Push, key: String) async throws -> (Int, Answer) {
        try await client.withConnection { connection in
            _ = try await execute("BEGIN", on: connection).collect()
            do {
                _ = try await execute("UPDATE \(table("head")) SET head = head WHERE id = 1", on: connection).collect()
                var keyBinds = PostgresBindings()
                keyBinds.append(key)
                let answers = try await execute(
                    "SELECT answer FROM \(table("ledger")) WHERE key = $1", on: connection, keyBinds
                ).collect()
                if let answer = try answers.first?.decode(String.self) {
                    _ = try await execute("COMMIT", on: connection).collect()
                    return (200, try JSONDecoder().decode(Answer.self, from: Data(answer.utf8)))
                }
                var idBinds = PostgresBindings()
                idBinds.append(push.id)
                var current: Row?
                for row in try await execute(
                    "SELECT id, owner, title, count FROM \(table("items")) WHERE id = $1 FOR UPDATE", on: connection,
                    idBinds
                ).collect() {
                    let (id, owner, title, count) = try row.decode((String, String, String, Int64).self)
                    current = Row(id: id, owner: owner, title: title, count: Int(count))
                }
                guard var row = current, row.title == push.baseTitle else {
                    _ = try await execute("ROLLBACK", on: connection).collect()
                    return (409, Answer(status: "conflict", row: current))
                }
                row.title = push.title
                var update = PostgresBindings()
                update.append(push.id)
                update.append(push.title)
                _ = try await execute("UPDATE \(table("items")) SET title = $2 WHERE id = $1", on: connection, update)
                    .collect()
                let heads = try await execute(
                    "UPDATE \(table("head")) SET head = head + 1 WHERE id = 1 RETURNING head", on: connection
                ).collect()
                let sequence = try heads.first?.decode(Int64.self) ?? 0
                var log = PostgresBindings()
                log.append(sequence)
                log.append(push.id)
                _ = try await execute("INSERT INTO \(table("log")) VALUES ($1, $2)", on: connection, log).collect()
                let answer = Answer(status: "applied", row: row)
                var ledger = PostgresBindings()
                ledger.append(key)
                ledger.append(String(decoding: try JSONEncoder().encode(answer), as: UTF8.self))
                ledger.append(sequence)
                _ = try await execute("INSERT INTO \(table("ledger")) VALUES ($1, $2, $3)", on: connection, ledger)
                    .collect()
                _ = try await execute("COMMIT", on: connection).collect()
                return (200, answer)
            } catch {
                _ = try? await execute("ROLLBACK", on: connection).collect()
                throw error
            }
        }
    }
}

// MARK: - Servers

func json(_ status: HTTPResponse.Status, _ value: some Encodable) throws -> Response {
    Response(
        status: status, headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value))))
}

/// DepotSyncServer's routes under `/sync`, as an app mounts them.
func depotRouter(_ sync: SyncServer<Caller>) -> Router<BasicRequestContext> {
    let router = Router()
    router.addRoutes(sync.routes(context: BasicRequestContext.self) { _, _ in Caller(id: "bench") }, atPath: "/sync")
    return router
}

/// The hand-written routes under `/raw`.
func rawRouter(_ raw: RawSync) -> Router<BasicRequestContext> {
    let router = Router()
    router.get("/raw/feed") { request, _ -> Response in
        var cursor = ""
        for part in (request.uri.query ?? "").split(separator: "&") where part.hasPrefix("cursor=") {
            guard let decoded = String(part.dropFirst("cursor=".count)).removingPercentEncoding else {
                throw HTTPError(.badRequest)
            }
            cursor = decoded
        }
        return try json(.ok, try await raw.feed(after: cursor, limit: pageSize))
    }
    router.post("/raw/push") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 1 << 20)
        let push = try JSONDecoder().decode(RawSync.Push.self, from: Data(buffer: body))
        guard let key = request.headers.first(where: { $0.name.canonicalName == "idempotency-key" })?.value else {
            throw HTTPError(.badRequest)
        }
        let (status, answer) = try await raw.push(push, key: key)
        return try json(HTTPResponse.Status(code: status), answer)
    }
    return router
}

/// Serves `router` on 127.0.0.1 until the task is cancelled.
func startServer(_ router: Router<BasicRequestContext>) async throws -> (URL, Task<Void, any Error>) {
    let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }, logger: Logger(label: "bench-server", factory: { _ in SwiftLogNoOpLogHandler() }))
    let task = Task { try await app.run() }
    var port = 0
    for await bound in stream { port = bound }
    guard port > 0, let url = URL(string: "http://127.0.0.1:\(port)") else {
        throw BenchError(description: "the benchmark's server did not listen")
    }
    return (url, task)
}

// MARK: - Load

/// Sends `method path` with `body` and returns the status and body.
func call(
    _ http: HTTPClient, _ method: NIOHTTP1.HTTPMethod, _ url: String, body: Data? = nil, key: String? = nil
) async throws
    -> (Int, Data)
{
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let key { request.headers.add(name: "Idempotency-Key", value: key) }
    if let body {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
    }
    let response = try await http.execute(request, timeout: .seconds(60))
    let bytes = try await response.body.collect(upTo: 64 << 20)
    return (Int(response.status.code), Data(buffer: bytes))
}

/// Every client pages through the whole copy at once; returns the milliseconds and the pages.
func feedLoad(_ http: HTTPClient, base: URL, depot: Bool) async throws -> (Double, Int) {
    var pages = 0
    let milliseconds = try await BenchHarness.time {
        pages = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    var cursor: String?
                    var count = 0
                    var rows = 0
                    while true {
                        let query =
                            cursor.map {
                                "&cursor=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)
                            } ?? ""
                        let path = depot ? "/sync/bench_items/feed?limit=\(pageSize)" : "/raw/feed?limit=\(pageSize)"
                        let (status, data) = try await call(http, .GET, base.absoluteString + path + query)
                        guard status == 200 else { throw BenchError(description: "feed answered \(status)") }
                        count += 1
                        if depot {
                            let page = try JSONDecoder().decode(SyncProtocol.FeedPage.self, from: data)
                            rows += page.rows.count
                            cursor = page.cursor
                            if page.cursor.hasPrefix("log:") { break }
                        } else {
                            let page = try JSONDecoder().decode(RawSync.Page.self, from: data)
                            rows += page.rows.count
                            cursor = page.cursor
                            if !page.more { break }
                        }
                    }
                    guard rows == rowCount else { throw BenchError(description: "a copy brought \(rows) rows") }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
    }
    return (milliseconds, pages)
}

/// Every client pushes `pushesPerClient` edits of rows of its own at once.
func pushLoad(_ http: HTTPClient, base: URL, depot: Bool) async throws -> (Double, Int) {
    let milliseconds = try await BenchHarness.time {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    for edit in 0..<pushesPerClient {
                        let index = client * pushesPerClient + edit
                        let item = BenchItem.row(index)
                        let key = "client \(client) edit \(edit)"
                        let body: Data
                        if depot {
                            body = try JSONEncoder().encode(
                                SyncProtocol.Push(
                                    key: [.string(item.id)], operation: "set", changes: ["title": .string("pushed")],
                                    base: ["title": .string(item.title)], editedAt: "2026-11-27T00:00:00Z"))
                        } else {
                            body = try JSONEncoder().encode(
                                RawSync.Push(id: item.id, title: "pushed", baseTitle: item.title))
                        }
                        let path = depot ? "/sync/bench_items/push" : "/raw/push"
                        let (status, data) = try await call(
                            http, .POST, base.absoluteString + path, body: body, key: key)
                        guard status == 200 else {
                            throw BenchError(
                                description: "push answered \(status): \(String(decoding: data, as: UTF8.self))")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    return (milliseconds, clients * pushesPerClient)
}

// MARK: - Main

guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
    BenchHarness.usageError("depot-sync-server-bench needs DEPOT_POSTGRES_URL (eval \"$(.ci/postgres start)\")")
}
let json = CommandLine.arguments.contains("--json")
let settings = try PostgresStore.Configuration(url: url)
var rawSettings = PostgresClient.Configuration(
    host: settings.host, port: settings.port, username: settings.username, password: settings.password,
    database: settings.database, tls: .disable)
// As many connections as the Depot side's pool.
rawSettings.options.maximumConnections = clients
let rawClient = PostgresClient(configuration: rawSettings, backgroundLogger: logger)
let rawRun = Task { await rawClient.run() }
var httpConfiguration = HTTPClient.Configuration()
httpConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = clients
let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: httpConfiguration)
let items = (0..<rowCount).map(BenchItem.row)

/// One side of a round: fresh tables, then the timed load.
func side(depot: Bool, load: @escaping @Sendable (HTTPClient, URL, Bool) async throws -> (Double, Int)) -> ()
    async throws -> (
        Double, Int
    )
{
    {
        let schema = schemaName()
        if depot {
            var configuration = settings
            configuration.schema = schema
            configuration.maximumConnections = clients
            let store = PostgresStore(configuration: configuration)
            let sync = try await SyncServer<Caller>.open(
                store: store,
                tables: [.table(BenchItem.self, scope: { _ in .all }, authorize: { _, _ in true })],
                configuration: .init(defaultPageSize: pageSize))
            try await store.repository(BenchItem.self).insert(items)
            let (base, server) = try await startServer(depotRouter(sync))
            let result = try await load(http, base, true)
            server.cancel()
            _ = await server.result
            try? await store.dropSchema()
            await store.close()
            return result
        }
        let raw = RawSync(client: rawClient, schema: schema)
        try await raw.create(rows: items)
        let (base, server) = try await startServer(rawRouter(raw))
        let result = try await load(http, base, false)
        server.cancel()
        _ = await server.result
        await raw.drop()
        return result
    }
}

var results: [BenchResult] = []
for (name, load, unit) in [
    (
        "feed pages, \(clients) clients", feedLoad as @Sendable (HTTPClient, URL, Bool) async throws -> (Double, Int),
        "pages"
    ),
    ("pushes, \(clients) clients", pushLoad, "pushes"),
] {
    let byHand = side(depot: false, load: load)  // twice: the baseline against itself is the A/A floor
    let runs = try await BenchHarness.interleave(rounds: rounds, [side(depot: true, load: load), byHand, byHand])
    let subject = BenchHarness.median(runs[0].map(\.0))
    let baseline = BenchHarness.median(runs[1].map(\.0))
    let count = runs[0].first?.1 ?? 0
    var result = BenchResult(
        case: name, backend: "postgres", n: count, subject: "DepotSyncServer", medianMilliseconds: subject,
        baseline: "Hummingbird+PostgresNIO by hand", baselineMedianMilliseconds: baseline)
    result.floor = BenchHarness.floor(again: BenchHarness.median(runs[2].map(\.0)), baseline: baseline)
    results.append(result)
    if !json {
        print(
            String(
                format: "%@: %d %@ — DepotSyncServer %.0f ms (%.0f/s), by hand %.0f ms (%.0f/s): %.2f×", name, count,
                unit, subject, Double(count) / subject * 1000, baseline, Double(count) / baseline * 1000, result.ratio)
                + result.floorNote)
    }
}
if json { try BenchHarness.writeJSONLines(results) }
try await http.shutdown().get()
rawRun.cancel()
