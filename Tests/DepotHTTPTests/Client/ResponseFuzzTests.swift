import DepotHTTP
import DepotTestSupport
import Foundation
import PropertyBased
import Synchronization
import Testing

private struct Person: Codable, Equatable, Sendable {
    var id: Int
    var name: String
}

/// Header values a server might send, well-formed or not.
private let headerValue = Gen<String>.oneOf(
    Gen.element(of: [
        "", "0", "-1", "1.5", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "garbage", "gzip", "deflate",
        "br", "identity", "gzip, deflate", "application/json", "text/plain; charset=utf-8",
        "application/json; charset=latin1", "\u{7F}", "ä",
    ]).map { $0 ?? "" }.eraseToAnySequence(),
    Gen.unicodeScalar(in: "\u{20}"..."\u{7E}").map { Character($0) }.string(of: 0...12).eraseToAnySequence()
)

private let headerName = Gen.element(of: [
    "Content-Type", "Content-Encoding", "Retry-After", "Content-Length", "Location", "X-Odd", "Transfer-Encoding",
]).map { $0 ?? "X-Odd" }

/// A body: JSON that fits, JSON that almost fits, or any bytes.
private let bodyGenerator = Gen<[UInt8]>.oneOf(
    Gen.element(of: [
        #"{"id": 1, "name": "Ada"}"#, #"{"data": {"id": 1, "name": "Ada"}}"#, #"{"id": "1", "name": "Ada"}"#,
        #"{"id": 1}"#, #"{"id": 1e400, "name": "x"}"#, #"[]"#, "", "null", #"{"message": "nope"}"#,
        #"{"id": 1, "name": "\ud800"}"#,
    ]).map { Array(($0 ?? "").utf8) }.eraseToAnySequence(),
    Gen.uint8(in: 0...255).array(of: 0...64).eraseToAnySequence(),
    // A gzip header followed by garbage: what a lying Content-Encoding delivers.
    Gen.uint8(in: 0...255).array(of: 0...32).map { [0x1F, 0x8B, 0x08, 0x00] + $0 }.eraseToAnySequence()
)

@Suite("Fuzzed HTTP responses")
struct ResponseFuzzTests {
    @Test(
        "any status, header fields and body give the decoded value or an HTTPError naming the endpoint, never a trap or a hang"
    )
    func fuzzedResponses() async throws {
        try await HeavyHarness.run {
            let outcomes = Mutex((values: 0, errors: [String: Int]()))
            let status = Gen<Int>.oneOf(
                Gen.int(in: 100...599).eraseToAnySequence(),
                Gen.element(of: [200, 204, 304, 401, 404, 429, 500, 503, 0, 999]).map { $0 ?? 200 }.eraseToAnySequence()
            )
            let headers = zip(headerName, headerValue).array(of: 0...4)
            await propertyCheck(count: 2000, input: status, headers, bodyGenerator) { status, fields, body in
                var headerFields: HeaderFields = [:]
                for (name, value) in fields { headerFields[name] = value }
                let stub = StubTransport()
                stub.stub(.get, "/fuzz", .status(status, body: Data(body), headers: headerFields))
                let client = APIClient(
                    baseURL: StubTransportTests.base, transport: stub,
                    configuration: .testing(retryPolicy: .none))
                do {
                    let person = try await client.send(AnyEndpoint<Person>(.get, "/fuzz"))
                    #expect((200..<300).contains(status), "status \(status) gave \(person)")
                    outcomes.withLock { $0.values += 1 }
                } catch let error as HTTPError {
                    // The request that failed: /fuzz, or where a 3xx's Location sent the client.
                    #expect(error.endpoint == "GET /fuzz" || error.endpoint.hasPrefix("GET /v1/"), "\(error)")
                    #expect(
                        "\(error)".contains(error.endpoint) && "\(error)".contains(error.kind.description), "\(error)")
                    #expect(error.kind != .timedOut && error.kind != .cancelled, "\(error)")
                    outcomes.withLock { $0.errors[error.kind.description, default: 0] += 1 }
                } catch {
                    Issue.record("status \(status), \(fields), \(body.count) bytes: \(error) is not an HTTPError")
                }
            }
            let (values, errors) = outcomes.withLock { ($0.values, $0.errors) }
            print("fuzzed HTTP responses: \(values) decoded, errors by kind: \(errors.sorted { $0.key < $1.key })")
            #expect(values + errors.values.reduce(0, +) == 2000)
        }
    }

    @Test("any Retry-After value gives a wait between zero and the policy's maximum")
    func fuzzedRetryAfter() async throws {
        try await HeavyHarness.run {
            let policy = RetryPolicy(maximumAttempts: 3, maximumDelay: .seconds(30))
            await propertyCheck(count: 2000, input: headerValue, Gen.int(in: 1...5)) { value, attempt in
                let response = TransportResponse(status: 503, headers: ["Retry-After": value])
                let wait = policy.delay(afterAttempt: attempt, response: response)
                #expect(wait >= .zero && wait <= .seconds(30), "Retry-After '\(value)' gave \(wait)")
            }
        }
    }
}
