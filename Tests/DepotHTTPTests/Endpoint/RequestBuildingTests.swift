import DepotHTTP
import Foundation
import Testing

@Suite("Building requests from endpoints")
struct RequestBuildingTests {
    static func client(
        _ base: String = "https://api.test/v1/", configure: (inout APIClient.Configuration) -> Void = { _ in }
    )
        throws -> APIClient
    {
        var configuration = APIClient.Configuration.testing()
        configure(&configuration)
        return APIClient(
            baseURL: try #require(URL(string: base)), transport: StubTransport(), configuration: configuration)
    }

    @Test("Paths join the base URL's path with one slash, and characters a path cannot hold are escaped")
    func paths() throws {
        let client = try Self.client()
        #expect(
            try client.makeRequest(for: Call(.get, "/users/42")).url.absoluteString == "https://api.test/v1/users/42")
        #expect(try client.makeRequest(for: Call(.get, "users")).url.absoluteString == "https://api.test/v1/users")
        #expect(
            try client.makeRequest(for: Call(.get, "/files/a b/ø")).url.absoluteString
                == "https://api.test/v1/files/a%20b/%C3%B8")
        #expect(try client.makeRequest(for: Call(.get, "/a%2Fb")).url.absoluteString == "https://api.test/v1/a%2Fb")
    }

    @Test("Query items are escaped strictly: + as %2B, space as %20, & and = inside values")
    func query() throws {
        let client = try Self.client()
        let endpoint = Call(
            .get, "/search",
            query: [
                URLQueryItem(name: "q", value: "a+b c&d=e"), URLQueryItem(name: "emoji", value: "✈︎"),
                URLQueryItem(name: "flag", value: nil), URLQueryItem(name: "safe", value: "AZaz09-._~"),
            ])
        #expect(
            try client.makeRequest(for: endpoint).url.query
                == "q=a%2Bb%20c%26d%3De&emoji=%E2%9C%88%EF%B8%8E&flag&safe=AZaz09-._~")
    }

    @Test("Headers: defaults, then User-Agent and Accept-Encoding, then the body's type, then the endpoint's")
    func headers() throws {
        let client = try Self.client { $0.headers = ["Accept": "application/json", "X-App": "depot"] }
        let plain = try client.makeRequest(for: EchoEndpoint())
        #expect(plain.headers["accept"] == "application/json")
        #expect(plain.headers["User-Agent"] == "DepotHTTP/1.0")
        #expect(plain.headers["Accept-Encoding"] == "gzip, deflate")
        #expect(plain.headers["Content-Type"] == nil)
        #expect(plain.body == nil)

        let custom = try client.makeRequest(
            for: EchoEndpoint(
                method: .post,
                headers: ["x-app": "override", "User-Agent": "Custom/2", "Content-Type": "application/vnd+json"],
                body: .json(["a": 1])))
        #expect(custom.headers.values(for: "X-App") == ["override"])
        #expect(custom.headers["User-Agent"] == "Custom/2")
        #expect(custom.headers["Content-Type"] == "application/vnd+json")
        #expect(custom.body == Data(#"{"a":1}"#.utf8))
    }

    @Test("JSON bodies use the client's encoder unless the body brings its own")
    func jsonEncoders() throws {
        struct Stamp: Codable, Sendable { var at: Date }
        let client = try Self.client { $0.encoder.dateEncodingStrategy = .secondsSince1970 }
        let stamp = Stamp(at: Date(timeIntervalSince1970: 100))
        #expect(
            try client.makeRequest(for: EchoEndpoint(method: .post, body: .json(stamp))).body
                == Data(#"{"at":100}"#.utf8))
        let iso = JSONEncoder()
        iso.dateEncodingStrategy = .iso8601
        #expect(
            try client.makeRequest(for: EchoEndpoint(method: .post, body: .json(stamp, encoder: iso))).body
                == Data(#"{"at":"1970-01-01T00:01:40Z"}"#.utf8))
    }

    @Test("A body that cannot be encoded fails with the endpoint and the coding path, not the value")
    func encodingFailure() throws {
        let client = try Self.client()
        let body = RequestBody.json(["readings": [1.0, .nan]])
        let error = #expect(throws: HTTPError.self) {
            try client.makeRequest(for: EchoEndpoint(method: .post, path: "/readings", body: body))
        }
        #expect(error?.kind == .encodingFailed)
        #expect(error?.endpoint == "POST /readings")
        #expect(error?.codingPath == "readings[1]")
    }
}
