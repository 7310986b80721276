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
    /// The credentials every fuzzed call carries: a redirect may take them only within the origin.
    private static let secret = "Bearer fuzz-secret"

    @Test(
        "any status, header fields and body give the decoded value or an HTTPError naming the endpoint, never a trap or a hang"
    )
    func fuzzedResponses() async throws {
        try await HeavyHarness.run {
            let outcomes = Mutex((values: 0, errors: [String: Int]()))
            let status = Gen<Int>.oneOf(
                Gen.int(in: 100...599).eraseToAnySequence(),
                Gen.element(of: [200, 204, 304, 401, 404, 429, 500, 503, 0, 999]).map { $0 ?? 200 }
                    .eraseToAnySequence(),
                // Redirects: their Location is one of `location`'s (or, when none is drawn, a drawn
                // header value, or none at all).
                Gen.element(of: [301, 302, 303, 307, 308]).map { $0 ?? 301 }.eraseToAnySequence()
            )
            let location = Gen.element(of: ["/", "/fuzz", "fuzz", "other", "/v1/other", "//elsewhere.test/x", "?q=1"])
                .map { $0 ?? "/" }
            let headers = zip(headerName, headerValue).array(of: 0...4)
            let input = zip(status, headers, location.optional, bodyGenerator)
            let seed = fuzzSeed(default: 2_026_112_6)
            print("fuzzed HTTP responses: seed \(seed) (DEPOT_FUZZ_SEED overrides it)")
            await seededPropertyCheck(seed: seed, count: 2000, input: input) { drawn, label in
                let (status, fields, location, body) = drawn
                var headerFields: HeaderFields = [:]
                for (name, value) in fields { headerFields[name] = value }
                if let location { headerFields["Location"] = location }
                let stub = StubTransport()
                stub.stub(.get, "/fuzz", .status(status, body: Data(body), headers: headerFields))
                let client = APIClient(
                    baseURL: StubTransportTests.base, transport: stub,
                    configuration: .testing(headers: ["Authorization": Self.secret], retryPolicy: .none))
                let drawnText = "\(label): status \(status), \(headerFields), \(body.count) bytes"
                do {
                    let person = try await client.send(AnyEndpoint<Person>(.get, "/fuzz"))
                    #expect((200..<300).contains(status), "\(drawnText) gave \(person)")
                    outcomes.withLock { $0.values += 1 }
                } catch let error as HTTPError {
                    // The endpoint called; or, when a redirect went where nothing is stubbed, the stub's
                    // name for the request it refused (the last one sent).
                    let refused = stub.requests.last.map { "GET \($0.url.path)" }
                    #expect(
                        error.endpoint == "GET /fuzz"
                            || (error.kind == .unexpectedRequest && error.endpoint == refused),
                        "\(drawnText): \(error)")
                    #expect(
                        "\(error)".contains(error.endpoint) && "\(error)".contains(error.kind.description),
                        "\(drawnText): \(error)")
                    #expect(error.kind != .timedOut && error.kind != .cancelled, "\(drawnText): \(error)")
                    outcomes.withLock { $0.errors[error.kind.description, default: 0] += 1 }
                } catch {
                    Issue.record("\(drawnText): \(error) is not an HTTPError")
                }
                // Redirects are followed wherever they lead, the base URL's path included (`/` from
                // `/v1`); the credentials go along only within the origin.
                for request in stub.requests {
                    let sameOrigin = Self.origin(of: request.url) == Self.origin(of: StubTransportTests.base)
                    #expect(
                        (request.headers["Authorization"] == Self.secret) == sameOrigin,
                        "\(drawnText): \(request.url) carried \(request.headers["Authorization"] ?? "nothing")")
                }
            }
            let (values, errors) = outcomes.withLock { ($0.values, $0.errors) }
            print("fuzzed HTTP responses: \(values) decoded, errors by kind: \(errors.sorted { $0.key < $1.key })")
            #expect(values + errors.values.reduce(0, +) == 2000)
        }
    }

    /// Scheme, host and port (the scheme's default when absent), lowercased.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    @Test("any Retry-After value gives a wait between zero and the policy's maximum")
    func fuzzedRetryAfter() async throws {
        try await HeavyHarness.run {
            let policy = RetryPolicy(maximumAttempts: 3, maximumDelay: .seconds(30))
            let seed = fuzzSeed(default: 2_026_112_7)
            await seededPropertyCheck(seed: seed, count: 2000, input: zip(headerValue, Gen.int(in: 1...5))) {
                drawn, label in
                let (value, attempt) = drawn
                let response = TransportResponse(status: 503, headers: ["Retry-After": value])
                let wait = policy.delay(afterAttempt: attempt, response: response)
                #expect(wait >= .zero && wait <= .seconds(30), "\(label): Retry-After '\(value)' gave \(wait)")
            }
        }
    }
}
