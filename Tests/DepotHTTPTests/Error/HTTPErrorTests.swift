import DepotHTTP
import Foundation
import Testing

#if canImport(AsyncHTTPClient)
    import AsyncHTTPClient
#endif

@Suite("HTTPError")
struct HTTPErrorTests {
    @Test("The description names the endpoint, kind, status, message, path and body, in that order")
    func description() {
        let error = HTTPError(
            .decodingFailed, endpoint: "GET /team", detail: "Team: the key is missing", status: 200,
            bodyExcerpt: #"{"name": 1}"#, codingPath: "members[0].name")
        #expect(
            error.description
                == #"GET /team: decoding failed (200): Team: the key is missing at members[0].name; body: {"name": 1}"#)
        #expect(
            HTTPError(.notFound, endpoint: "GET /u/1", status: 404, serverMessage: "No user 1").description
                == "GET /u/1: not found (404): No user 1")
    }

    @Test("Transport errors of both libraries map to one set of kinds")
    func mapping() async throws {
        var cases: [(any Error, HTTPError.Kind)] = [
            (URLError(.timedOut), .timedOut), (URLError(.cancelled), .cancelled),
            (URLError(.cannotConnectToHost), .connectionFailed), (URLError(.networkConnectionLost), .connectionFailed),
            (URLError(.badURL), .invalidRequest), (CancellationError(), .cancelled),
        ]
        #if canImport(AsyncHTTPClient)
            cases += [
                (HTTPClientError.readTimeout, .timedOut), (HTTPClientError.deadlineExceeded, .timedOut),
                (HTTPClientError.cancelled, .cancelled), (HTTPClientError.remoteConnectionClosed, .connectionFailed),
                (HTTPClientError.invalidURL, .invalidRequest),
            ]
        #endif
        for (error, kind) in cases {
            let stub = StubTransport(failingWith: error)
            let client = APIClient(
                baseURL: StubTransportTests.base, transport: stub, configuration: .testing(retryPolicy: .none))
            let mapped = await httpError { try await client.send(Call(.get, "/x")) }
            #expect(mapped?.kind == kind, "\(error)")
            #expect(mapped?.endpoint == "GET /x")
        }
    }
}
