import DepotHTTP
import Foundation
import Testing

@Suite("Response decoders")
struct ResponseDecoderTests {
    static func response(_ json: String, status: Int = 200) -> TransportResponse {
        TransportResponse(status: status, headers: ["X-Total": "3"], body: Data(json.utf8))
    }

    @Test("JSON uses the client's decoder unless the endpoint brings its own")
    func clientOrOwnDecoder() throws {
        struct Stamp: Codable, Sendable, Equatable { var at: Date }
        let seconds = JSONDecoder()
        seconds.dateDecodingStrategy = .secondsSince1970
        let response = Self.response(#"{"at": 100}"#)
        #expect(
            try ResponseDecoder<Stamp>.json().decode(response, clientDecoder: seconds)
                == Stamp(at: Date(timeIntervalSince1970: 100)))
        #expect(
            try ResponseDecoder<Stamp>.json(using: seconds).decode(response, clientDecoder: JSONDecoder())
                == Stamp(at: Date(timeIntervalSince1970: 100)))
    }

    @Test("A wrapped payload decodes from its key, other members ignored")
    func wrapped() throws {
        let response = Self.response(#"{"result": [{"id": 1, "name": "Ada"}], "meta": {"next": null}}"#)
        #expect(
            try ResponseDecoder<[User]>.json(wrappedIn: "result").decode(response, clientDecoder: JSONDecoder())
                == [User(id: 1, name: "Ada")])
    }

    @Test("Empty, data and text decoders, metadata and map")
    func otherDecoders() throws {
        let response = Self.response(#"{"id": 2, "name": "Grace"}"#)
        let decoder = JSONDecoder()
        try ResponseDecoder<Void>.empty.decode(response, clientDecoder: decoder)
        #expect(try ResponseDecoder<Data>.data.decode(response, clientDecoder: decoder) == response.body)
        #expect(
            try ResponseDecoder<String>.text.decode(response, clientDecoder: decoder) == #"{"id": 2, "name": "Grace"}"#)
        let full = try ResponseDecoder<DecodedResponse<User>>.withMetadata(.json()).decode(
            response, clientDecoder: decoder)
        #expect(full.value == User(id: 2, name: "Grace"))
        #expect(full.headers["x-total"] == "3")
        #expect(full.data == response.body)
        #expect(try ResponseDecoder<User>.json().map(\.name).decode(response, clientDecoder: decoder) == "Grace")
        let total = ResponseDecoder<Int> { response, _ in Int(response.headers["X-Total"] ?? "") ?? 0 }
        #expect(try total.decode(response, clientDecoder: decoder) == 3)
    }

    @Test("Default decoders follow the response type: JSON for Decodable, nothing for Void, bytes for Data")
    func defaults() async throws {
        struct GetUser: Endpoint {
            typealias Response = User
            var path: String { "/user" }
        }
        struct Delete: Endpoint {
            typealias Response = Void
            var method: HTTPMethod { .delete }
            var path: String { "/user" }
        }
        struct Download: Endpoint {
            typealias Response = Data
            var path: String { "/file" }
        }
        let stub = StubTransport()
        stub.stub(.get, "/user", .json(User(id: 1, name: "Ada")))
        stub.stub(.delete, "/user", .text("not json"))
        stub.stub(.get, "/file", .text("[1, 2]"))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())
        #expect(try await client.send(GetUser()) == User(id: 1, name: "Ada"))
        try await client.send(Delete())
        #expect(try await client.send(Download()) == Data("[1, 2]".utf8))
        #expect(Delete().isIdempotent && !EchoEndpoint(method: .post).isIdempotent)
    }

    @Test("A missing key is named with its full coding path")
    func missingKey() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/team", .text(#"{"name": "t", "members": [{"id": 1}]}"#))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())
        let error = await httpError { try await client.send(AnyEndpoint<Team>(.get, "/team")) }
        #expect(error?.kind == .decodingFailed)
        #expect(error?.codingPath == "members[0].name")
        #expect(
            error?.description.hasPrefix(
                "GET /team: decoding failed (200): Team: the key is missing at members[0].name") == true)
    }
}
