import DepotHTTP
import Foundation
import Synchronization
import Testing

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test("Backoff doubles per attempt, with jitter taking up to its share off, capped at the maximum")
    func backoff() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), maximumDelay: .milliseconds(350), jitter: 0.5)
        for _ in 0..<200 {
            let first = policy.delay(afterAttempt: 1, response: nil)
            let second = policy.delay(afterAttempt: 2, response: nil)
            let fourth = policy.delay(afterAttempt: 4, response: nil)
            #expect(first >= .milliseconds(50) && first <= .milliseconds(100))
            #expect(second >= .milliseconds(100) && second <= .milliseconds(200))
            #expect(fourth >= .milliseconds(175) && fourth <= .milliseconds(350))
        }
        let exact = RetryPolicy(baseDelay: .milliseconds(10), jitter: 0)
        #expect(exact.delay(afterAttempt: 3, response: nil) == .milliseconds(40))
    }

    @Test("Values out of range are taken at the nearest valid one, never trapping")
    func outOfRangeValues() {
        let wild = RetryPolicy(
            maximumAttempts: -3, baseDelay: .seconds(-5), maximumDelay: .seconds(-1), jitter: .nan)
        #expect(wild.delay(afterAttempt: 0, response: nil) == .zero)
        #expect(wild.delay(afterAttempt: -7, response: nil) == .zero)
        var huge = RetryPolicy(baseDelay: .seconds(Int64.max / 2), maximumDelay: .seconds(Int64.max), jitter: 7)
        #expect(huge.delay(afterAttempt: Int.max, response: nil) >= .zero)
        huge.jitter = -1
        #expect(huge.delay(afterAttempt: 40, response: nil) >= .seconds(Int64.max / 2))
        let none = RetryPolicy(maximumAttempts: 0)
        #expect(none.delay(afterAttempt: 1, response: nil) <= .milliseconds(200))
    }

    @Test("Retry-After as seconds or as an HTTP date replaces the backoff, capped at the maximum")
    func retryAfter() {
        let policy = RetryPolicy(maximumDelay: .seconds(60))
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        func delay(_ value: String) -> Duration {
            policy.delay(
                afterAttempt: 1, response: TransportResponse(status: 503, headers: ["Retry-After": value]), now: now)
        }
        #expect(delay("7") == .seconds(7))
        #expect(delay("Wed, 21 Oct 2015 07:28:30 GMT") == .seconds(30))
        #expect(delay("3600") == .seconds(60))
        #expect(delay("soon") <= .milliseconds(200))
    }

    @Test("Transport failures of idempotent requests are retried; every wait goes through the policy's sleep")
    func retriesTransportFailures() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/x", .failure(.connectionFailed), .failure(.connectionFailed), .text("ok"))
        let waits = Mutex<[Duration]>([])
        var retry = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(100), jitter: 0)
        retry.sleep = { duration in waits.withLock { $0.append(duration) } }
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub, configuration: .testing(retryPolicy: retry))
        #expect(try await client.send(AnyEndpoint<String>(.get, "/x", decoder: .text)) == "ok")
        #expect(waits.withLock { $0 } == [.milliseconds(100), .milliseconds(200)])
        #expect(stub.requests.count == 3)
    }

    @Test("Decoding failures, 4xx and cancellations are not retried")
    func notRetried() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/bad", .text("not json"))
        stub.stub(.get, "/missing", .status(404))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())
        _ = await httpError { try await client.send(AnyEndpoint<User>(.get, "/bad")) }
        _ = await httpError { try await client.send(Call(.get, "/missing")) }
        #expect(stub.requests.count == 2)
    }

    @Test("No retry starts after the deadline: the last answer stands instead of a timeout")
    func retryWouldPassDeadline() async throws {
        let stub = StubTransport()
        // Retry-After far beyond a deadline generous enough that a busy test machine (the loopback
        // suites run alongside) cannot make the immediate stub answer itself miss it.
        stub.stub(.get, "/busy", .status(503, headers: ["Retry-After": "600"]))
        let waits = Mutex<[Duration]>([])
        var retry = RetryPolicy(maximumDelay: .seconds(600))
        retry.sleep = { duration in waits.withLock { $0.append(duration) } }
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(timeout: .seconds(60), retryPolicy: retry))
        let error = await httpError { try await client.send(Call(.get, "/busy")) }
        #expect(error?.kind == .serverError)
        #expect(error?.status == 503)
        #expect(waits.withLock { $0 }.isEmpty)
        #expect(stub.requests.count == 1)
    }
}
