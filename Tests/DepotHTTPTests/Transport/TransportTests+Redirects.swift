import DepotHTTP
import Foundation
import Testing

extension TransportTests {
    /// A client with a custom token header, an `Authorization` header and a cookie: the
    /// credentials a redirect may carry away.
    func credentialedClient(_ kind: TransportKind, of baseURL: URL? = nil) async throws -> APIClient {
        let tokens = TokenProvider(token: { "key-secret" }, refresh: { _ in "key-secret" })
        return try await kind.client(of: baseURL) {
            $0.middleware = [TokenAuthentication(tokens, headerName: "X-Api-Key", scheme: "")]
            $0.headers["Authorization"] = "Bearer header-secret"
            $0.headers["Cookie"] = "session=cookie-secret"
            $0.headers["X-Trace"] = "trace-1"
        }
    }

    @Test(
        "A redirect to another origin carries no credentials: token header, Authorization, Cookie",
        arguments: transports)
    func crossOriginRedirectDropsCredentials(kind: TransportKind) async throws {
        let other = try await RawServer.shared()
        let client = try await credentialedClient(kind)
        let target = other.baseURL.appendingPathComponent("headers").absoluteString
        let seen = try await client.send(
            AnyEndpoint<[String: String]>(.get, "/redirect", query: [URLQueryItem(name: "to", value: target)]))
        let names = Set(seen.keys.map { $0.lowercased() })
        #expect(!names.contains("x-api-key"), "\(seen)")
        #expect(!names.contains("authorization"), "\(seen)")
        #expect(!names.contains("cookie"), "\(seen)")
        #expect(seen.first { $0.key.lowercased() == "x-trace" }?.value == "trace-1")
    }

    @Test("A redirect within the origin keeps every header", arguments: transports)
    func sameOriginRedirectKeepsCredentials(kind: TransportKind) async throws {
        let client = try await credentialedClient(kind)
        let echo = try await client.send(
            AnyEndpoint<Echo>(.get, "/redirect", query: [URLQueryItem(name: "to", value: "/echo?x=1")]))
        #expect(echo.path == "/echo")
        #expect(echo.headers["x-api-key"] == "key-secret")
        #expect(echo.headers["authorization"] == "Bearer header-secret")
    }

    @Test(
        "A redirect that leaves the base URL's path but not its origin is followed, with every header",
        arguments: transports)
    func redirectOutOfBasePath(kind: TransportKind) async throws {
        // The origin, not the base URL's path, is where credentials belong (as browsers and
        // RFC 6454 have it): `/v1/redirect` → `/echo` is the same server.
        let base = try await TestServer.shared().baseURL.appendingPathComponent("v1")
        let client = try await credentialedClient(kind, of: base)
        let echo = try await client.send(
            AnyEndpoint<Echo>(.get, "/redirect", query: [URLQueryItem(name: "to", value: "/echo?x=1")]))
        #expect(echo.path == "/echo")
        #expect(echo.query == "x=1")
        #expect(echo.headers["x-api-key"] == "key-secret")
        #expect(echo.headers["authorization"] == "Bearer header-secret")
        // A failure after such a redirect names the endpoint called, not where it was sent.
        let error = await httpError {
            try await client.send(
                AnyEndpoint<Echo>(.get, "/redirect", query: [URLQueryItem(name: "to", value: "/status/404")]))
        }
        #expect(error?.kind == .notFound)
        #expect(error?.endpoint == "GET /redirect")
    }

    @Test("303 turns a POST into a GET without its body; 307 repeats the POST with it", arguments: transports)
    func redirectMethods(kind: TransportKind) async throws {
        let client = try await kind.client()
        for (status, method, body) in [(303, "GET", ""), (307, "POST", #"{"id":1,"name":"Ada"}"#)] {
            let echo = try await client.send(
                AnyEndpoint<Echo>(
                    .post, "/redirect",
                    query: [
                        URLQueryItem(name: "to", value: "/echo"), URLQueryItem(name: "status", value: "\(status)"),
                    ],
                    body: .json(User(id: 1, name: "Ada"))))
            #expect(echo.method == method, "\(status)")
            if body.isEmpty {
                #expect(echo.body.isEmpty, "\(status)")
            } else {
                #expect(try JSONDecoder().decode(User.self, from: Data(echo.body.utf8)) == User(id: 1, name: "Ada"))
            }
        }
    }

    @Test("A redirect loop fails as an invalid response after 10 redirects", arguments: transports)
    func redirectLoop(kind: TransportKind) async throws {
        let client = try await kind.client { $0.retryPolicy = .none }
        let error = await httpError { try await client.send(AnyEndpoint<Echo>(.get, "/loop")) }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.detail.contains("more than 10 redirects") == true, "\(String(describing: error))")
    }

    @Test("A body that does not end is refused once it passes the size limit, while it streams", arguments: transports)
    func endlessBodyStopsAtTheLimit(kind: TransportKind) async throws {
        let client = try await kind.client {
            $0.maximumResponseSize = 1 << 20
            $0.timeout = .seconds(120)  // an outer bound: the limit, not the deadline, must end it
            $0.retryPolicy = .none
        }
        let server = try await TestServer.shared()
        let id = UUID().uuidString
        let error = await httpError { try await client.send(AnyEndpoint<Data>(.get, "/endless/\(id)")) }
        #expect(error?.kind == .responseTooLarge, "\(String(describing: error))")
        // Stopped while streaming: the server wrote the limit plus what the client read ahead of
        // its check, not the whole gigabyte (16,384 chunks) a client that buffers first takes.
        // (URLSession on Linux hands pieces to its delegate on a queue and keeps reading meanwhile:
        // on a loaded machine it read about 80 MiB before the cancel took hold.)
        let written = server.counters.count("endless-\(id)")
        #expect(written < 8_192, "the server wrote \(written) chunks of 64 KiB before the client stopped")
    }
}
