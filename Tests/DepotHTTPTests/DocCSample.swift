// DepotHTTP's DocC landing page sample, verbatim between the markers (ReadmeSampleTests checks it).
import DepotHTTP
import DepotTestSupport
import Foundation
import Hummingbird
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

@Test("DepotHTTP's landing sample fetches and decodes a profile from a real server, and names a missing one")
func landingSampleRuns() async throws {
    let router = Router()
    router.get("/v1/users/:id") { _, context -> Response in
        guard context.parameters.get("id") == "42" else { return Response(status: .notFound) }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"id": 42, "name": "Ada"}"#)))
    }
    let server = try await LocalHTTPServer.start(router)
    try await withCleanup {
        let api = server.url.appendingPathComponent("v1")
        let ada = try await profile(42, api: api)
        #expect(ada.id == 42 && ada.name == "Ada")
        let missing = await #expect(throws: (any Error).self) { _ = try await profile(7, api: api) }
        #expect("\(missing.map { String(describing: $0) } ?? "")".contains("404"), "\(String(describing: missing))")
    } cleanup: {
        await server.stop()
    }
}
