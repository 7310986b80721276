import DepotHTTP
import Foundation
import Synchronization
import Testing

/// Network faults a real server or network produces, against the bare loopback ``RawServer``.
extension TransportTests {
    // MARK: - Truncated bodies

    @Test(
        "A chunked body cut off before its last chunk is a connection failure, never a short success",
        arguments: transports)
    func truncatedChunkedBody(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL) { $0.retryPolicy = .none }
        let path = "/chunked-truncated/\(UUID().uuidString)"
        let error = await httpError { try await client.send(Bytes(path: path)) }
        #expect(
            error?.kind == .connectionFailed, "\(String(describing: error)) \(String(describing: error?.underlying))")
        #expect(error?.endpoint == "GET \(path)")
        #expect(raw.hits(path) == 1)
    }

    @Test("A GET whose chunked body is cut off is retried like a dropped connection, then fails", arguments: transports)
    func truncatedChunkedBodyRetried(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL)
        let path = "/chunked-truncated/\(UUID().uuidString)"
        let error = await httpError { try await client.send(Bytes(path: path)) }
        #expect(
            error?.kind == .connectionFailed, "\(String(describing: error)) \(String(describing: error?.underlying))")
        #expect(raw.hits(path) == 3)
    }

    // MARK: - Slow trickles

    @Test("A body trickling in a few bytes at a time arrives whole within the deadline", arguments: transports)
    func trickleWithinDeadline(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL) { $0.retryPolicy = .none }
        // 300 bytes, 7 at a time every 10 ms: 43 pieces, about 0.4 s. The deadline is an outer
        // bound, far from it: on a loaded 2-core machine a 100 ms answer took over 900 ms.
        let query = [
            URLQueryItem(name: "bytes", value: "300"), URLQueryItem(name: "step", value: "7"),
            URLQueryItem(name: "every", value: "10"),
        ]
        let data = try await client.send(
            Bytes(path: "/trickle/\(UUID().uuidString)", query: query, timeout: .seconds(60)))
        #expect(data == largeBody(300))
    }

    @Test(
        "A body still trickling in at the deadline times out, although bytes keep arriving",
        arguments: transports, [Duration.milliseconds(500), .milliseconds(1500)])
    func trickleOutlastsDeadline(kind: TransportKind, timeout: Duration) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL)
        // 2 bytes every 200 ms for 60 bytes: at least 6 s, however fast the machine. A piece comes
        // well within every deadline here, so only a deadline on the whole call can end it.
        let query = [
            URLQueryItem(name: "bytes", value: "60"), URLQueryItem(name: "step", value: "2"),
            URLQueryItem(name: "every", value: "200"),
        ]
        let endpoint = Bytes(path: "/trickle/\(UUID().uuidString)", query: query, timeout: timeout)
        let start = ContinuousClock.now
        let error = await httpError { try await client.send(endpoint) }
        let overshoot = ContinuousClock.now - start - timeout
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
        #expect(error?.endpoint == "GET \(endpoint.path)")
        print("\(kind.testDescription): trickle, \(timeout) deadline overshoot: \(overshoot)")
    }

    // MARK: - Bursts of server errors

    @Test(
        "A burst of 502 and 504 without Retry-After is retried with the policy's backoff until the 200",
        arguments: transports)
    func gatewayBurstThenSuccess(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let waits = Mutex<[Duration]>([])
        let client = try await kind.client(of: raw.baseURL) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(5), jitter: 0)
            $0.retryPolicy.sleep = { duration in waits.withLock { $0.append(duration) } }
        }
        let path = "/burst/\(UUID().uuidString)/502/504/502"
        try await client.send(Call(.get, path))
        #expect(raw.hits(path) == 4)
        #expect(waits.withLock { $0 } == [.milliseconds(5), .milliseconds(10), .milliseconds(20)])
    }

    @Test(
        "A burst of 5xx longer than the policy's attempts fails with the last attempt's status", arguments: transports)
    func gatewayBurstExhaustsAttempts(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL)
        let path = "/burst/\(UUID().uuidString)/504/502/503/502"
        let error = await httpError { try await client.send(Call(.get, path)) }
        #expect(error?.kind == .serverError)
        #expect(error?.status == 503)
        #expect(raw.hits(path) == 3)
    }

    @Test("A 500 is not retried unless the policy lists it among its retryable statuses", arguments: transports)
    func internalErrorRetriedOnlyWhenListed(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let byDefault = try await kind.client(of: raw.baseURL)
        let once = "/burst/\(UUID().uuidString)/500"
        let error = await httpError { try await byDefault.send(Call(.get, once)) }
        #expect(error?.kind == .serverError)
        #expect(error?.status == 500)
        #expect(raw.hits(once) == 1)

        let listing = try await kind.client(of: raw.baseURL) { $0.retryPolicy.retryableStatuses.insert(500) }
        let retried = "/burst/\(UUID().uuidString)/500/500"
        try await listing.send(Call(.get, retried))
        #expect(raw.hits(retried) == 3)
    }

    // MARK: - Connections lost after the request

    /// An orderly close and a TCP reset, each once the server has read the whole request.
    static let closings = ["drop", "reset"]

    /// A request body of several reads and writes, so that it is surely whole when the server
    /// closes.
    static let uploadSize = 256 << 10

    @Test(
        "A POST whose connection is lost after the server read its whole body is not sent again, on a new or a kept-alive connection",
        arguments: transports, ["drop", "reset", "drop kept", "reset kept"])
    func postLostAfterBodyNotResent(kind: TransportKind, closing: String) async throws {
        // On a kept-alive connection URLSession on Linux (libcurl) sent it again by itself, without
        // its body, and the call hung until its deadline; the transport now gives such a request a
        // connection of its own. `RawServer.unkept()` opens a new connection for every request.
        let kept = closing.hasSuffix(" kept")
        let raw = try await kept ? RawServer.shared() : RawServer.unkept()
        let client = try await kind.client(of: raw.baseURL)
        if kept { try await client.send(Call(.get, "/burst/\(UUID().uuidString)")) }
        let path = "/\(closing.prefix { $0 != " " })/post-\(UUID().uuidString)"
        let body = RequestBody.data(largeBody(Self.uploadSize), contentType: "application/octet-stream")
        // The deadline is an outer bound: a lost connection must end the call long before it.
        let endpoint = AnyEndpoint<Void>(.post, path, body: body, timeout: .seconds(60))
        let error = await httpError { try await client.send(endpoint) }
        #expect(
            error?.kind == .connectionFailed, "\(String(describing: error)) \(String(describing: error?.underlying))")
        #expect(raw.hits(path) == 1)
        #expect(raw.bodySizes(path) == [Self.uploadSize])
    }

    @Test(
        "A POST marked idempotent is sent again, whole, after its connection is lost past the body",
        arguments: transports, closings)
    func idempotentPostLostAfterBodyResent(kind: TransportKind, closing: String) async throws {
        let raw = try await RawServer.unkept()
        let client = try await kind.client(of: raw.baseURL)
        let path = "/\(closing)/idempotent-\(UUID().uuidString)"
        let body = RequestBody.data(largeBody(Self.uploadSize), contentType: "application/octet-stream")
        let endpoint = AnyEndpoint<Void>(.post, path, body: body, isIdempotent: true, timeout: .seconds(20))
        let error = await httpError { try await client.send(endpoint) }
        #expect(
            error?.kind == .connectionFailed, "\(String(describing: error)) \(String(describing: error?.underlying))")
        #expect(raw.hits(path) == 3)
        #expect(raw.bodySizes(path) == Array(repeating: Self.uploadSize, count: 3))
    }

    // MARK: - Silent servers

    @Test(
        "A server that reads the request and never answers times out at the deadline, is not retried, and is hung up on",
        arguments: transports)
    func silentServerTimesOut(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL)
        let id = "silent-\(kind)-\(UUID().uuidString)"
        let timeout = Duration.milliseconds(500)
        let start = ContinuousClock.now
        let error = await httpError { try await client.send(Call(.get, "/hang/\(id)", timeout: timeout)) }
        let overshoot = ContinuousClock.now - start - timeout
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
        #expect(raw.hits("/hang/\(id)") == 1)
        await raw.closed(id)  // the client hung up (the suite's time limit bounds one that does not)
        print("\(kind.testDescription): silent server, \(timeout) deadline overshoot: \(overshoot)")
    }
}
