import CompressNIO
import DepotHTTP
import Foundation
import NIOCore
import Testing

@Suite("Decompression by the client")
struct ContentDecodingTests {
    static let team = Team(name: "packed", members: (0..<500).map { User(id: $0, name: "member \($0)") })

    static func compressed(_ algorithm: CompressionAlgorithm) throws -> Data {
        var buffer = ByteBuffer(bytes: try JSONEncoder().encode(team))
        return Data(try buffer.compress(with: algorithm).readableBytesView)
    }

    static func client(_ body: Data, coding: String, maximumSize: Int = 64 << 20) -> APIClient {
        let stub = StubTransport()
        stub.stub(
            .get, "/team",
            .status(200, body: body, headers: ["Content-Encoding": coding, "Content-Length": "\(body.count)"]))
        var configuration = APIClient.Configuration.testing()
        configuration.maximumResponseSize = maximumSize
        return APIClient(baseURL: StubTransportTests.base, transport: stub, configuration: configuration)
    }

    @Test(
        "gzip, zlib-wrapped deflate and raw deflate bodies decode, and the coding fields are removed",
        arguments: [
            ("gzip", CompressionAlgorithm.gzip()), ("deflate", .zlib()), ("deflate", .deflate()), ("x-gzip", .gzip()),
        ])
    func decodes(coding: String, algorithm: CompressionAlgorithm) async throws {
        let client = Self.client(try Self.compressed(algorithm), coding: coding)
        let response = try await client.send(
            AnyEndpoint<DecodedResponse<Team>>(.get, "/team", decoder: .withMetadata(.json())))
        #expect(response.value == Self.team)
        #expect(response.headers["Content-Encoding"] == nil)
        #expect(response.headers["Content-Length"] == nil)
    }

    @Test("A body a transport already decoded under a gzip field passes through")
    func alreadyDecoded() async throws {
        let client = Self.client(try JSONEncoder().encode(Self.team), coding: "gzip")
        #expect(try await client.send(AnyEndpoint<Team>(.get, "/team")) == Self.team)
    }

    @Test("A corrupt body, an unknown coding and a decompression bomb are errors")
    func failures() async throws {
        var corrupt = try Self.compressed(.gzip())
        corrupt.replaceSubrange(20..<40, with: Data(repeating: 0xFF, count: 20))
        let corruptError = await httpError {
            try await Self.client(corrupt, coding: "gzip").send(AnyEndpoint<Team>(.get, "/team"))
        }
        #expect(corruptError?.kind == .invalidResponse)
        #expect(corruptError?.detail == "the gzip body does not decompress")

        let unknown = await httpError {
            try await Self.client(Data([1, 2]), coding: "br").send(AnyEndpoint<Team>(.get, "/team"))
        }
        #expect(unknown?.kind == .invalidResponse)
        #expect(unknown?.detail == "unsupported Content-Encoding br")

        let bomb = await httpError {
            try await Self.client(try Self.compressed(.gzip()), coding: "gzip", maximumSize: 1000).send(
                AnyEndpoint<Team>(.get, "/team"))
        }
        #expect(bomb?.kind == .responseTooLarge)
    }
}
