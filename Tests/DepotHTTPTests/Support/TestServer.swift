import CompressNIO
import DepotTestSupport
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// A Hummingbird server on 127.0.0.1 (an ephemeral port), started once for the test process,
/// with a route for every scenario the transport suite covers.
final class TestServer: Sendable {
    let port: Int
    let baseURL: URL
    let counters: Counters

    /// Request counts by key, so that tests can see what the server saw.
    final class Counters: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        @discardableResult
        func increment(_ key: String) -> Int {
            counts.withLock { counts in
                counts[key, default: 0] += 1
                return counts[key, default: 0]
            }
        }
        func count(_ key: String) -> Int { counts.withLock { $0[key, default: 0] } }
    }

    /// The token `/auth/*` accepts.
    static let validToken = "fresh-token"

    private init(port: Int, baseURL: URL, counters: Counters) {
        self.port = port
        self.baseURL = baseURL
        self.counters = counters
    }

    private static let starting = Task { try await start() }

    /// The server, started on first use.
    static func shared() async throws -> TestServer { try await starting.value }

    private static func start() async throws -> TestServer {
        let counters = Counters()
        let router = Router()
        addRoutes(to: router, counters: counters)
        // Runs for the rest of the test process.
        let server = try await LocalHTTPServer.start(router)
        return TestServer(port: server.port, baseURL: server.url, counters: counters)
    }

    // MARK: - Routes

    private static func addRoutes(to router: Router<BasicRequestContext>, counters: Counters) {
        router.get("/ping") { _, _ in "ok" }

        router.on("/echo", method: .get) { request, context in try await echo(request, context) }
        router.on("/echo", method: .post) { request, context in try await echo(request, context) }
        router.on("/echo", method: .put) { request, context in try await echo(request, context) }
        router.on("/echo", method: .delete) { request, context in try await echo(request, context) }
        router.on("/echo", method: .patch) { request, context in try await echo(request, context) }

        // /status/404?message=No+user&key=ErrorMessage, or ?text=plain body
        router.get("/status/:code") { request, context -> Response in
            let code = try context.parameters.require("code", as: Int.self)
            let query = items(request.uri.query)
            let body: String
            if let message = query["message"] {
                let key = query["key"] ?? "message"
                body = String(decoding: try JSONSerialization.data(withJSONObject: [key: message]), as: UTF8.self)
            } else {
                body = query["text"] ?? ""
            }
            return Response(
                status: .init(code: code), headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }

        // /redirect?to=URL&status=302: a redirect to `to` (absolute or relative), any method; the
        // same under /v1, for a client whose base URL has a path.
        for path in ["/redirect", "/v1/redirect"] {
            for method in [HTTPRequest.Method.get, .post, .head] {
                router.on(RouterPath(path), method: method) { request, _ -> Response in
                    let query = items(request.uri.query)
                    return Response(
                        status: .init(code: Int(query["status"] ?? "") ?? 302),
                        headers: [.location: query["to"] ?? "/echo"])
                }
            }
        }

        // Redirects to itself, for ever.
        router.get("/loop") { _, _ in Response(status: .found, headers: [.location: "/loop"]) }

        // A body with no announced length that does not end (up to 1 GiB, 64 KiB at a time) until
        // the client stops reading: what a misbehaving server or a decompression bomb looks like.
        // Counts the chunks written as "endless-<id>".
        router.get("/endless/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            return Response(
                status: .ok,
                body: .init { writer in
                    let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 << 10)
                    for _ in 0..<16_384 {
                        try await writer.write(chunk)
                        _ = counters.increment("endless-\(id)")
                    }
                    try await writer.finish(nil)
                })
        }

        router.get("/large") { request, _ -> Response in
            let count = Int(items(request.uri.query)["bytes"] ?? "") ?? 0
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: largeBody(count))))
        }

        // Responds after `ms` milliseconds.
        router.get("/slow") { request, _ -> String in
            let milliseconds = Int(items(request.uri.query)["ms"] ?? "") ?? 0
            try await Task.sleep(for: .milliseconds(milliseconds))
            return "done"
        }

        // Sends half of `bytes`, then stalls for 10 s before the rest.
        router.get("/stall") { request, _ -> Response in
            let count = Int(items(request.uri.query)["bytes"] ?? "") ?? 1000
            let body = largeBody(count)
            return Response(
                status: .ok,
                body: .init(contentLength: count) { writer in
                    try await writer.write(ByteBuffer(bytes: body.prefix(count / 2)))
                    try await Task.sleep(for: .seconds(10))
                    try await writer.write(ByteBuffer(bytes: body.dropFirst(count / 2)))
                    try await writer.finish(nil)
                })
        }

        // /flaky/<id>?failures=2&status=503&retryAfter=1: `failures` answers of `status`, then 200.
        router.on("/flaky/:id", method: .get) { request, context in try flaky(request, context, counters) }
        router.on("/flaky/:id", method: .post) { request, context in try flaky(request, context, counters) }

        // A JSON body, gzip- or deflate-encoded (`Content-Encoding` as given).
        router.get("/compressed/:coding") { request, context -> Response in
            let coding = try context.parameters.require("coding")
            let repeats = Int(items(request.uri.query)["repeat"] ?? "") ?? 1
            let team = Team(
                name: "compressed",
                members: (0..<repeats).map { User(id: $0, name: "member \($0) — ünïcödé") })
            var plain = ByteBuffer(bytes: try JSONEncoder().encode(team))
            let algorithm: CompressionAlgorithm = coding == "deflate" ? .zlib() : .gzip()
            let compressed = try plain.compress(with: algorithm)
            return Response(
                status: .ok, headers: [.contentType: "application/json", .contentEncoding: coding],
                body: .init(byteBuffer: compressed))
        }

        // 401 unless `Authorization: Bearer fresh-token`; counts both answers per realm.
        router.get("/auth/:realm/me") { request, context -> Response in
            let realm = try context.parameters.require("realm")
            guard request.headers[.authorization] == "Bearer \(validToken)" else {
                counters.increment("auth-401-\(realm)")
                return Response(
                    status: .unauthorized, body: .init(byteBuffer: ByteBuffer(string: #"{"message":"token expired"}"#)))
            }
            counters.increment("auth-200-\(realm)")
            let user = User(id: 7, name: "authorized")
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(user))))
        }

        // /held/<id>?status=200: counts "held-<id>", tells `HeldRequests` it arrived, and answers
        // (user 1, or an empty body of `status`) once the test releases it.
        router.get("/held/:id") { request, context -> Response in
            let id = try context.parameters.require("id")
            counters.increment("held-\(id)")
            HeldRequests.arrived(id).fire()
            await HeldRequests.released(id).wait()
            let status = Int(items(request.uri.query)["status"] ?? "") ?? 200
            guard status == 200 else { return Response(status: .init(code: status)) }
            return json(#"{"id": 1, "name": "held"}"#)
        }

        // POST /held/<id>: the same, and also tells `HeldRequests` that request number n arrived
        // (`arrived("<id>#<n>")`), so a test can wait for two identical POSTs in flight at once.
        router.post("/held/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            let number = counters.increment("held-\(id)")
            HeldRequests.arrived("\(id)#\(number)").fire()
            await HeldRequests.released(id).wait()
            return json(#"{"id": 1, "name": "held"}"#)
        }

        router.get("/user/:id") { _, context -> Response in
            let id = try context.parameters.require("id", as: Int.self)
            return json(#"{"id": \#(id), "name": "user \#(id)"}"#)
        }
        router.get("/wrapped") { _, _ in json(#"{"data": {"id": 1, "name": "Ada"}, "meta": {"page": 1}}"#) }
        router.get("/bad-team") { _, _ in
            json(#"{"name": "bad", "members": [{"id": 1, "name": "Ada"}, {"id": "two", "name": "Grace"}]}"#)
        }
        router.get("/empty") { _, _ in Response(status: .noContent) }

        // The README sample's API: airports by country, behind the bearer token.
        router.get("/airports") { request, _ -> Response in
            guard request.headers[.authorization] == "Bearer \(validToken)" else {
                return Response(status: .unauthorized)
            }
            guard items(request.uri.query)["country"] == "NO" else {
                return Response(
                    status: .notFound, body: .init(byteBuffer: ByteBuffer(string: #"{"message": "no airports in XX"}"#))
                )
            }
            return json(
                #"{"data": [{"code": "ENGM", "iata": "OSL", "name": "Oslo Gardermoen", "country": "NO", "elevationFeet": 681, "lat": 60.1939, "lon": 11.1004}, "#
                    + #"{"code": "ENBR", "iata": "BGO", "name": "Bergen Flesland", "country": "NO", "elevationFeet": 170, "lat": 60.2934, "lon": 5.21814}]}"#
            )
        }
        router.get("/set-cookie") { _, _ in
            Response(status: .ok, headers: [.setCookie: "session=cookie-secret"], body: .init())
        }
    }

    private static func json(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private static func flaky(_ request: Request, _ context: BasicRequestContext, _ counters: Counters) throws
        -> Response
    {
        let id = try context.parameters.require("id")
        let hits = counters.increment("flaky-\(id)")
        let query = items(request.uri.query)
        let failures = Int(query["failures"] ?? "") ?? 0
        guard hits > failures else {
            var headers: HTTPFields = [:]
            if let retryAfter = query["retryAfter"] { headers[.retryAfter] = retryAfter }
            return Response(status: .init(code: Int(query["status"] ?? "") ?? 503), headers: headers)
        }
        return json(#"{"hits": \#(hits)}"#)
    }

    private static func echo(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 16 << 20)
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        var components = URLComponents()
        components.percentEncodedQuery = request.uri.query
        let echo = Echo(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
            items: (components.queryItems ?? []).map { [$0.name, $0.value ?? ""] }, headers: headers,
            body: String(buffer: body))
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(echo))))
    }

    /// Query items by name, percent-decoded (the first of repeated names).
    static func items(_ query: String?) -> [String: String] {
        var components = URLComponents()
        components.percentEncodedQuery = query
        var result: [String: String] = [:]
        for item in components.queryItems ?? [] where result[item.name] == nil { result[item.name] = item.value ?? "" }
        return result
    }
}

/// The signals of the test server's `/held/<id>` route: one fires when a request arrives, the
/// other releases its answer.
enum HeldRequests {
    private static let signals = Mutex<[String: Signal]>([:])

    private static func signal(_ name: String) -> Signal {
        signals.withLock { signals in
            if let signal = signals[name] { return signal }
            let signal = Signal()
            signals[name] = signal
            return signal
        }
    }

    /// Fires when a request for `id` has arrived.
    static func arrived(_ id: String) -> Signal { signal("arrived-\(id)") }
    /// Fired by the test: the requests for `id` are answered.
    static func released(_ id: String) -> Signal { signal("released-\(id)") }
}
