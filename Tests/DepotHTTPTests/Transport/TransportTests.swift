import DepotHTTP
import Foundation
import Testing

/// One suite, run on every real transport against the loopback servers. Serialized so that the
/// deadline windows and the soak's memory figures are not disturbed by each other.
@Suite("Real transports against a loopback server", .serialized, .timeLimit(.minutes(10)))
struct TransportTests {
    static let transports = TransportKind.available

    // MARK: - Responses

    @Test("A JSON response decodes into the endpoint's type", arguments: transports)
    func decodesJSON(kind: TransportKind) async throws {
        let client = try await kind.client()
        let user = try await client.send(AnyEndpoint<User>(.get, "/user/42"))
        #expect(user == User(id: 42, name: "user 42"))
    }

    @Test("A {\"data\": …} payload unwraps, and DecodedResponse keeps status, headers and bytes", arguments: transports)
    func wrappedAndMetadata(kind: TransportKind) async throws {
        let client = try await kind.client()
        let user = try await client.send(AnyEndpoint<User>(.get, "/wrapped", decoder: .json(wrappedIn: "data")))
        #expect(user == User(id: 1, name: "Ada"))

        let response = try await client.send(
            AnyEndpoint<DecodedResponse<User>>(.get, "/user/5", decoder: .withMetadata(.json())))
        #expect(response.value == User(id: 5, name: "user 5"))
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(String(decoding: response.data, as: UTF8.self).contains(#""name": "user 5""#))
    }

    @Test("204 No Content satisfies a Void endpoint", arguments: transports)
    func emptyResponse(kind: TransportKind) async throws {
        let client = try await kind.client()
        try await client.send(Call(.get, "/empty"))
    }

    @Test("A decoding failure names the endpoint, the coding path and the body", arguments: transports)
    func decodingFailure(kind: TransportKind) async throws {
        let client = try await kind.client()
        let error = await httpError { try await client.send(AnyEndpoint<Team>(.get, "/bad-team")) }
        #expect(error?.kind == .decodingFailed)
        #expect(error?.endpoint == "GET /bad-team")
        #expect(error?.codingPath == "members[1].id")
        #expect(error?.bodyExcerpt?.contains(#""id": "two""#) == true)
        #expect(error?.description.contains("GET /bad-team: decoding failed") == true)
    }

    @Test("A 5 MB response arrives whole", arguments: transports)
    func largeResponse(kind: TransportKind) async throws {
        let client = try await kind.client()
        let size = 5 * 1024 * 1024 + 17
        let data = try await client.send(Bytes(path: "/large", query: [URLQueryItem(name: "bytes", value: "\(size)")]))
        #expect(data.count == size)
        #expect(data == largeBody(size))
    }

    @Test("A body larger than the limit is refused", arguments: transports)
    func responseTooLarge(kind: TransportKind) async throws {
        let client = try await kind.client { $0.maximumResponseSize = 1000 }
        let error = await httpError {
            try await client.send(Bytes(path: "/large", query: [URLQueryItem(name: "bytes", value: "5000")]))
        }
        #expect(error?.kind == .responseTooLarge)
    }

    @Test("A streamed body with no announced length is refused once it passes the limit", arguments: transports)
    func chunkedTooLarge(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL) { $0.maximumResponseSize = 1000 }
        let error = await httpError { try await client.send(Bytes(path: "/chunked")) }
        #expect(error?.kind == .responseTooLarge)
        let whole = try await kind.client(of: raw.baseURL) { $0.maximumResponseSize = 5000 }
        #expect(try await whole.send(Bytes(path: "/chunked")).count == 5000)
    }

    @Test("A 304 or a HEAD answer announcing a length over the limit is not refused", arguments: transports)
    func bodilessLengths(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let client = try await kind.client(of: raw.baseURL) { $0.maximumResponseSize = 1000 }
        let notModified = await httpError { try await client.send(Call(.get, "/not-modified")) }
        #expect(notModified?.kind == .unexpectedStatus, "\(String(describing: notModified))")
        #expect(notModified?.status == 304)
        try await client.send(Call(.head, "/announce-large"))
    }

    @Test("A transport handed an interruption that already fired stops without sending", arguments: transports)
    func alreadyInterrupted(kind: TransportKind) async throws {
        let raw = try await RawServer.shared()
        let interruption = TransportInterruption()
        interruption.interrupt()
        let request = TransportRequest(method: .get, url: raw.baseURL.appendingPathComponent("never-sent"))
        await #expect(throws: CancellationError.self) {
            try await kind.transport.send(request, maximumBodySize: 1000, interruption: interruption)
        }
        #expect(raw.hits("/never-sent") == 0)
    }

    @Test("gzip and deflate bodies are decompressed", arguments: transports, ["gzip", "deflate"])
    func compressedBodies(kind: TransportKind, coding: String) async throws {
        let client = try await kind.client()
        let endpoint = AnyEndpoint<DecodedResponse<Team>>(
            .get, "/compressed/\(coding)", query: [URLQueryItem(name: "repeat", value: "2000")],
            decoder: .withMetadata(.json()))
        let response = try await client.send(endpoint)
        #expect(response.value.members.count == 2000)
        #expect(response.value.members[1999].name == "member 1999 — ünïcödé")
        #expect(response.headers["Content-Encoding"] == nil)
    }

    // MARK: - Statuses

    static let statuses: [(Int, HTTPError.Kind)] = [
        (400, .unexpectedStatus), (401, .unauthorized), (403, .forbidden), (404, .notFound), (409, .unexpectedStatus),
        (426, .updateRequired), (500, .serverError), (501, .updateRequired), (503, .serverError),
    ]

    @Test("Every status maps to its error kind, with the status and the server's message", arguments: transports)
    func statusMapping(kind: TransportKind) async throws {
        let client = try await kind.client { $0.retryPolicy = .none }
        for (status, expected) in Self.statuses {
            let endpoint = Call(
                .get, "/status/\(status)", query: [URLQueryItem(name: "message", value: "why \(status)")])
            let error = await httpError { try await client.send(endpoint) }
            #expect(error?.kind == expected, "status \(status)")
            #expect(error?.status == status)
            #expect(error?.serverMessage == "why \(status)")
            #expect(error?.endpoint == "GET /status/\(status)")
        }
    }

    @Test("404 carries the server's message under a configured key", arguments: transports)
    func notFoundMessageKey(kind: TransportKind) async throws {
        let client = try await kind.client { $0.statusPolicy.messageKeys = ["ErrorMessage"] }
        let endpoint = Call(
            .get, "/status/404",
            query: [
                URLQueryItem(name: "message", value: "No user 42"), URLQueryItem(name: "key", value: "ErrorMessage"),
            ])
        let error = await httpError { try await client.send(endpoint) }
        #expect(error?.kind == .notFound)
        #expect(error?.serverMessage == "No user 42")
        #expect(
            error?.description == #"GET /status/404: not found (404): No user 42; body: {"ErrorMessage":"No user 42"}"#)
    }

    @Test("An unexpected status carries the status and an excerpt of the body", arguments: transports)
    func unexpectedStatusExcerpt(kind: TransportKind) async throws {
        let client = try await kind.client()
        let text = String(repeating: "teapot ", count: 100)
        let error = await httpError {
            try await client.send(Call(.get, "/status/418", query: [URLQueryItem(name: "text", value: text)]))
        }
        #expect(error?.kind == .unexpectedStatus)
        #expect(error?.status == 418)
        #expect(error?.serverMessage == nil)
        #expect(error?.bodyExcerpt == String(text.prefix(HTTPError.bodyExcerptLength)) + "…")
    }

    // MARK: - Requests

    @Test(
        "The client's and the endpoint's headers reach the server, with User-Agent and Accept-Encoding",
        arguments: transports)
    func headers(kind: TransportKind) async throws {
        let client = try await kind.client {
            $0.headers["X-Client"] = "depot"
            $0.headers["X-Replaced"] = "client"
            $0.userAgent = "DepotTests/1.0"
        }
        let echo = try await client.send(EchoEndpoint(headers: ["X-Replaced": "endpoint", "X-Endpoint": "ünï"]))
        #expect(echo.headers["user-agent"] == "DepotTests/1.0")
        #expect(echo.headers["accept-encoding"] == "gzip, deflate")
        #expect(echo.headers["accept"] == "application/json")
        #expect(echo.headers["x-client"] == "depot")
        #expect(echo.headers["x-replaced"] == "endpoint")
        #expect(echo.headers["x-endpoint"] == "ünï")
    }

    @Test("Query items with spaces, unicode, + and & arrive intact", arguments: transports)
    func queryEncoding(kind: TransportKind) async throws {
        let client = try await kind.client()
        let items = [
            URLQueryItem(name: "q", value: "a b+c&d=e"), URLQueryItem(name: "city", value: "São Paulo ✈︎"),
            URLQueryItem(name: "plus", value: "+"), URLQueryItem(name: "a&b", value: "100%"),
            URLQueryItem(name: "empty", value: ""), URLQueryItem(name: "q", value: "second"),
        ]
        let echo = try await client.send(EchoEndpoint(query: items))
        #expect(echo.items == items.map { [$0.name, $0.value ?? ""] })
        #expect(echo.query?.hasPrefix("q=a%20b%2Bc%26d%3De&city=S%C3%A3o%20Paulo") == true)
    }

    @Test("JSON, form and raw bodies arrive with their content types", arguments: transports)
    func requestBodies(kind: TransportKind) async throws {
        let client = try await kind.client()
        let json = try await client.send(
            EchoEndpoint(method: .post, body: .json(Team(name: "Ø", members: [User(id: 1, name: "Ada")]))))
        #expect(json.method == "POST")
        #expect(json.headers["content-type"] == "application/json")
        #expect(
            try JSONDecoder().decode(Team.self, from: Data(json.body.utf8))
                == Team(name: "Ø", members: [User(id: 1, name: "Ada")]))

        let form = try await client.send(
            EchoEndpoint(method: .put, body: .form([URLQueryItem(name: "a b", value: "c+d&e")])))
        #expect(form.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(form.body == "a%20b=c%2Bd%26e")

        let raw = try await client.send(
            EchoEndpoint(method: .patch, body: .data(Data("raw ✓".utf8), contentType: "text/plain; charset=utf-8")))
        #expect(raw.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(raw.body == "raw ✓")
    }
}
