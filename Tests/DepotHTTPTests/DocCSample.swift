// DepotHTTP's DocC landing page sample, verbatim between the markers (ReadmeSampleTests checks it).
import DepotHTTP
import Foundation
import Testing

// readme:begin
struct Profile: Decodable, Sendable {
    var id: Int
    var name: String
}

struct GetProfile: Endpoint {
    typealias Response = Profile
    let id: Int
    var path: String { "/users/\(id)" }
}

func profile(_ id: Int, api: URL) async throws -> Profile {
    let client = APIClient(baseURL: api)  // e.g. https://api.example.com/v1
    return try await client.send(GetProfile(id: id))  // GET https://api.example.com/v1/users/42
}
// readme:end

@Test("DepotHTTP's landing sample builds the request it says")
func landingSampleRequest() throws {
    let endpoint = GetProfile(id: 42)
    #expect(endpoint.path == "/users/42")
    #expect(endpoint.method == .get)
}
