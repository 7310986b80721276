import DepotHTTP
import Foundation
import Testing

/// The body an API answers errors with.
struct APIProblem: Decodable, Sendable, Equatable {
    var error: String
    var code: Int
}

/// An endpoint declaring its error body: `/status/{status}?text={body}` answers that body.
struct CreateAccount: Endpoint {
    typealias Response = User
    typealias ErrorBody = APIProblem
    var status: Int
    var answer: String
    var path: String { "/status/\(status)" }
    var query: [URLQueryItem] { [URLQueryItem(name: "text", value: answer)] }
}

extension TransportTests {
    @Test("An error body decodes into the endpoint's declared type, beside the status kind", arguments: transports)
    func typedErrorBody(kind: TransportKind) async throws {
        let client = try await kind.client()
        let error = await httpError {
            try await client.send(CreateAccount(status: 422, answer: #"{"error": "name taken", "code": 17}"#))
        }
        #expect(error?.status == 422)
        #expect(error?.errorBody(as: APIProblem.self) == APIProblem(error: "name taken", code: 17))
        #expect(error?.serverMessage == "name taken")
        let missing = await httpError {
            try await client.send(CreateAccount(status: 404, answer: #"{"error": "no such team", "code": 4}"#))
        }
        #expect(missing?.kind == .notFound)
        #expect(missing?.errorBody(as: APIProblem.self)?.code == 4)
    }

    @Test("An error body that is not the declared type keeps the status kind and names why", arguments: transports)
    func undecodableErrorBody(kind: TransportKind) async throws {
        let client = try await kind.client()
        let error = await httpError {
            try await client.send(CreateAccount(status: 500, answer: #"{"error": "boom", "code": "x"}"#))
        }
        #expect(error?.kind == .serverError)
        #expect(error?.errorBody(as: APIProblem.self) == nil)
        #expect(error?.detail.contains("the error body is not a APIProblem") == true)
        #expect(error?.codingPath == "code")
        let plain = await httpError { try await client.send(Call(.get, "/status/422?text=nope")) }
        #expect(plain?.errorBody == nil, "an endpoint without an error body decodes none")
    }
}

/// `/user/{id}` on a base URL of its own.
struct UserElsewhere: Endpoint {
    typealias Response = User
    var id: Int
    var baseURL: URL?
    var path: String { "/user/\(id)" }
}

extension TransportTests {
    @Test("An endpoint with a base URL of its own is sent there, with the client's headers", arguments: transports)
    func endpointBaseURL(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        // The client's own base URL has a path prefix the server does not serve: only the
        // endpoint's base URL can answer.
        let client = try await kind.client(of: server.baseURL.appendingPathComponent("nowhere")) {
            $0.headers["X-Trace"] = "elsewhere"
        }
        let user = try await client.send(UserElsewhere(id: 7, baseURL: server.baseURL.appendingPathComponent("/")))
        #expect(user == User(id: 7, name: "user 7"))
        let request = try client.makeRequest(for: UserElsewhere(id: 7, baseURL: server.baseURL))
        #expect(request.url.absoluteString == server.baseURL.absoluteString + "/user/7")
        #expect(request.headers["X-Trace"] == "elsewhere")
        let fallback = try client.makeRequest(for: UserElsewhere(id: 7, baseURL: nil))
        #expect(fallback.url.absoluteString.hasSuffix("/nowhere/user/7"))
        let notServed = await httpError { try await client.send(UserElsewhere(id: 7, baseURL: nil)) }
        #expect(notServed?.kind == .notFound)
        let bad = try #require(URL(string: "https://example.com/v1?key=1"))
        let error = await httpError { try await client.send(UserElsewhere(id: 7, baseURL: bad)) }
        #expect(error?.kind == .invalidRequest)
    }
}
