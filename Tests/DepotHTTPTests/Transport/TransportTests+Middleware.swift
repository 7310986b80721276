import DepotHTTP
import DepotTestSupport
import Foundation
import Logging
import MetricsTestKit
import Synchronization
import Testing

extension TransportTests {
    @Test("On 401, ten concurrent requests share one token refresh and all succeed", arguments: transports)
    func authRefresh(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let refreshes = Mutex(0)
        let tokens = TokenProvider(
            token: { "stale-token" },
            refresh: { rejected in
                #expect(rejected == "stale-token")
                refreshes.withLock { $0 += 1 }
                try await Task.sleep(for: .milliseconds(50))  // keep the refresh open while 401s arrive
                return TestServer.validToken
            })
        // Ten requests of their own (identical GETs would otherwise share one).
        let client = try await kind.client {
            $0.middleware = [TokenAuthentication(tokens)]
            $0.sharesIdenticalRequests = false
        }
        let realm = UUID().uuidString
        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<10 { group.addTask { try await client.send(AnyEndpoint<User>(.get, "/auth/\(realm)/me")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(users.count == 10)
        #expect(refreshes.withLock { $0 } == 1)
        #expect(server.counters.count("auth-401-\(realm)") == 10)
        #expect(server.counters.count("auth-200-\(realm)") == 10)

        // The refreshed token is kept: no more 401s.
        _ = try await client.send(AnyEndpoint<User>(.get, "/auth/\(realm)/me"))
        #expect(server.counters.count("auth-401-\(realm)") == 10)
    }

    @Test("A token the server still rejects after the refresh is unauthorized", arguments: transports)
    func authRejectedTwice(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let tokens = TokenProvider(token: { "stale-token" }, refresh: { _ in "also-wrong" })
        let client = try await kind.client { $0.middleware = [TokenAuthentication(tokens)] }
        let realm = UUID().uuidString
        let error = await httpError { try await client.send(AnyEndpoint<User>(.get, "/auth/\(realm)/me")) }
        #expect(error?.kind == .unauthorized)
        #expect(error?.serverMessage == "token expired")
        #expect(server.counters.count("auth-401-\(realm)") == 2)
    }

    @Test("Logging shows each call but never Authorization or cookie values", arguments: transports)
    func loggingRedacts(kind: TransportKind) async throws {
        let (logger, store) = CapturingLogHandler.logger()
        let client = try await kind.client {
            $0.middleware = [LoggingMiddleware(logger: logger)]
            $0.headers["Authorization"] = "Bearer header-secret"
            $0.headers["Cookie"] = "session=request-secret"
        }
        try await client.send(Call(.get, "/set-cookie", query: [URLQueryItem(name: "api_key", value: "query-secret")]))
        let lines = store.lines
        #expect(lines.count == 2)
        #expect(lines.first?.message == "→ GET /set-cookie")
        #expect(lines.last?.message.hasPrefix("← 200 GET /set-cookie in ") == true)
        let text = lines.map(\.fullText).joined(separator: "\n")
        for secret in ["header-secret", "request-secret", "cookie-secret", "query-secret"] {
            #expect(!text.contains(secret), "\(secret) was logged")
        }
        #expect(text.contains("Authorization: <redacted>"))
        #expect(text.contains("Cookie: <redacted>"))
        #expect(text.lowercased().contains("set-cookie: <redacted>"))
        #expect(text.contains("User-Agent: DepotHTTP/1.0"))
    }

    @Test("Metrics report each call's duration, status and sizes", arguments: transports)
    func metrics(kind: TransportKind) async throws {
        let recorded = Mutex<[RequestMetrics]>([])
        let client = try await kind.client {
            $0.retryPolicy = .none
            $0.middleware = [MetricsMiddleware { metrics in recorded.withLock { $0.append(metrics) } }]
        }
        _ = try await client.send(EchoEndpoint(method: .post, body: .data(Data(count: 1234), contentType: "x/y")))
        _ = await httpError { try await client.send(Call(.get, "/status/503")) }
        let raw = try await RawServer.shared()
        let dropping = try await kind.client(of: raw.baseURL) {
            $0.retryPolicy = .none
            $0.middleware = [MetricsMiddleware { metrics in recorded.withLock { $0.append(metrics) } }]
        }
        _ = await httpError { try await dropping.send(Call(.get, "/drop")) }

        let metrics = recorded.withLock { $0 }
        try #require(metrics.count == 3)
        #expect(metrics[0].endpoint == "POST /echo")
        #expect(metrics[0].status == 200)
        #expect(metrics[0].requestBytes == 1234)
        #expect(metrics[0].responseBytes > 1234)
        #expect(metrics[0].duration > .zero)
        #expect(metrics[1].status == 503)
        #expect(metrics[1].failure == nil)
        #expect(metrics[2].status == nil)
        #expect(metrics[2].failure == .connectionFailed)
    }

    @Test(
        "swift-metrics receives each call by method and status, its duration, its bytes and failures by kind",
        arguments: transports)
    func swiftMetrics(kind: TransportKind) async throws {
        let factory = TestMetrics()
        let middleware = MetricsMiddleware.swiftMetrics(factory: factory, dimensions: [("api", "test")])
        let client = try await kind.client {
            $0.retryPolicy = .none
            $0.middleware = [middleware]
        }
        _ = try await client.send(EchoEndpoint(method: .post, body: .data(Data(count: 1234), contentType: "x/y")))
        _ = await httpError { try await client.send(Call(.get, "/status/503")) }
        let raw = try await RawServer.shared()
        let dropping = try await kind.client(of: raw.baseURL) {
            $0.retryPolicy = .none
            $0.middleware = [middleware]
        }
        _ = await httpError { try await dropping.send(Call(.get, "/drop")) }

        let api = ("api", "test")
        #expect(
            factory.counterTotal(
                label: "depot_http_requests_total", dimensions: [api, ("method", "POST"), ("status", "200")]) == 1)
        #expect(
            factory.counterTotal(
                label: "depot_http_requests_total", dimensions: [api, ("method", "GET"), ("status", "503")]) == 1)
        #expect(
            factory.counterTotal(
                label: "depot_http_requests_total", dimensions: [api, ("method", "GET"), ("status", "none")]) == 1)
        #expect(
            factory.counterTotal(
                label: "depot_http_failures_total", dimensions: [api, ("method", "GET"), ("kind", "connection failed")])
                == 1)
        #expect(
            factory.counterTotal(label: "depot_http_sent_bytes_total", dimensions: [api, ("method", "POST")]) == 1234)
        #expect(
            factory.counterTotal(label: "depot_http_received_bytes_total", dimensions: [api, ("method", "POST")]) > 1234
        )
        #expect(
            try factory.expectTimer("depot_http_request_duration_seconds", [api, ("method", "GET")]).values.count == 2)
    }

    @Test("The activity tracker counts requests in flight as they start and finish", arguments: transports)
    func activity(kind: TransportKind) async throws {
        let activity = ActivityTracker()
        let client = try await kind.client { $0.middleware = [activity] }
        let counts = activity.inFlightCounts
        let observed = Task {
            var seen: [Int] = []
            for await count in counts {
                seen.append(count)
                if count == 0 && seen.contains(3) { break }
            }
            return seen
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Three different requests: identical ones would share one exchange.
            for index in 0..<3 {
                group.addTask {
                    try await client.send(
                        Call(.get, "/slow", query: [URLQueryItem(name: "ms", value: "\(300 + index)")]))
                }
            }
            try await group.waitForAll()
        }
        let seen = await observed.value
        #expect(seen.max() == 3)
        #expect(seen.last == 0)
        #expect(activity.inFlight == 0)
    }
}
