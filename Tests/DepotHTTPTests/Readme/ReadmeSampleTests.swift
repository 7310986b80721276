import Depot
import DepotHTTP
import Foundation
import Logging
import Testing

@Suite("README: DepotHTTP section", .timeLimit(.minutes(1)))
struct ReadmeSampleTests {
    @Test("The sample syncs airports from the loopback server into a store through the mapper")
    func sampleRuns() async throws {
        let server = try await TestServer.shared()
        let tokens = TokenProvider(token: { TestServer.validToken }, refresh: { _ in TestServer.validToken })
        let client = makeClient(
            baseURL: server.baseURL, tokens: tokens, logger: Logger(label: "readme") { _ in SwiftLogNoOpLogHandler() })
        let store = InMemoryStore()

        #expect(try await syncAirports(in: "NO", client: client, store: store) == 2)
        let stored = try await store.repository(Airport.self).fetch(orderBy: [.ascending(\.icao)])
        #expect(stored.map(\.icao) == ["ENBR", "ENGM"])
        #expect(stored.last?.elevation == 681)
        #expect(try await syncAirports(in: "XX", client: client, store: store) == 0)
    }

    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")

    static var readmeHasSection: Bool {
        (try? String(contentsOf: readme, encoding: .utf8))?.contains("<!-- readme-http-sample:begin -->") == true
    }

    @Test(
        "The README's DepotHTTP sample is the code compiled here, character for character",
        .enabled(if: readmeHasSection, "the DepotHTTP section is not in README.md yet"))
    func sampleIsInSync() throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let sample = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("ReadmeSample.swift"), encoding: .utf8)
        let fromReadme = try #require(
            text.components(separatedBy: "<!-- readme-http-sample:begin -->\n```swift\n").last?
                .components(separatedBy: "```\n<!-- readme-http-sample:end -->").first)
        let fromTest = try #require(
            sample.components(separatedBy: "// readme-http-sample:begin\n").last?
                .components(separatedBy: "// readme-http-sample:end").first)
        #expect(
            fromReadme.trimmingCharacters(in: .whitespacesAndNewlines)
                == fromTest.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
