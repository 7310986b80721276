import Depot
import Foundation
import Testing

@Suite("README")
struct ReadmeTests {
    @Test("the quick start compiles and runs on the in-memory store")
    func quickStartRuns() async throws {
        let store = InMemoryStore()
        try await quickStart(store: store)
        let airports = try await store.repository(Airport.self).fetchAll()
        #expect(airports.map(\.icao) == ["ENGM"])
    }

    @Test("the README's quick start is the code compiled here, character for character")
    func quickStartIsInSync() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let sample = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("ReadmeSample.swift"), encoding: .utf8)
        let fromReadme = try #require(
            readme.components(separatedBy: "<!-- readme-sample:begin -->\n```swift\nimport Depot\n").last?
                .components(separatedBy: "```\n<!-- readme-sample:end -->").first)
        let fromTest = try #require(
            sample.components(separatedBy: "// readme-sample:begin\n").last?
                .components(separatedBy: "// readme-sample:end").first)
        #expect(
            fromReadme.trimmingCharacters(in: .whitespacesAndNewlines)
                == fromTest.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
