import DepotHTTP
import Foundation
import Testing

@Suite("Endpoints as values")
struct AnyEndpointTests {
    enum UsersAPI {
        static func user(_ id: Int) -> AnyEndpoint<User> { AnyEndpoint(.get, "/users/\(id)") }
        static let rename = EndpointStrategy<User, User> { user in
            AnyEndpoint(.put, "/users/\(user.id)", body: .json(user))
        }
    }

    @Test("Functions and strategies build endpoints; map changes the response type, not the request")
    func strategies() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/users/1", .json(User(id: 1, name: "Ada")))
        stub.stub(.put, "/users/2", .json(User(id: 2, name: "Grace H.")))
        let client = APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: .testing())

        #expect(try await client.send(UsersAPI.user(1)) == User(id: 1, name: "Ada"))
        #expect(try await client.send(UsersAPI.user(1).map(\.name)) == "Ada")
        #expect(try await client.send(UsersAPI.rename, User(id: 2, name: "Grace H.")).name == "Grace H.")
        #expect(try await client.send(UsersAPI.rename.map(\.id), User(id: 2, name: "x")) == 2)
        let body = try #require(stub.requests.last?.body)
        #expect(try JSONDecoder().decode(User.self, from: body) == User(id: 2, name: "x"))
    }

    @Test("Erasing an endpoint keeps every part of it")
    func erasure() throws {
        let endpoint = EchoEndpoint(
            method: .patch, path: "/p", query: [URLQueryItem(name: "a", value: "b")], headers: ["X": "y"],
            body: .data(Data([1]), contentType: "x/y"))
        let erased = AnyEndpoint(endpoint)
        #expect(erased.method == .patch && erased.path == "/p" && erased.query == endpoint.query)
        #expect(erased.headers == ["x": "y"] && !erased.body.isEmpty && !erased.isIdempotent)
        let client = APIClient(baseURL: StubTransportTests.base, transport: StubTransport(), configuration: .testing())
        #expect(try client.makeRequest(for: erased).url == client.makeRequest(for: endpoint).url)
    }
}
