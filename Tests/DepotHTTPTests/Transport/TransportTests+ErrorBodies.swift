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
