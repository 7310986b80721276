import Depot
import DepotSQLite
import Foundation
import Testing

@Suite("README seed sample")
struct SeedSampleTests {
    @Test(
        "a response persisted twice keeps what the second one left out; find and fetch answer",
        arguments: [false, true])
    func persistsWithoutWiping(onSQLite: Bool) async throws {
        let store: any Store = onSQLite ? try SQLiteStore.temporary() : InMemoryStore()
        let image = #"{"url": "https://example.com/a.png", "width": 64, "height": 48}"#
        let first =
            #"[{"id": 1, "name": "Ada", "kind": "human", "image": \#(image), "isOnline": true},"#
            + #" {"id": 2, "name": "R2", "kind": "bot", "image": \#(image), "isOnline": true}]"#
        _ = try await seedUseSite(store: store, json: Data(first.utf8))
        // The second response leaves isOnline out for Ada and sends null for R2.
        let second =
            #"[{"id": 1, "name": "Ada L.", "kind": "human", "image": \#(image)},"#
            + #" {"id": 2, "name": "R2", "kind": "bot", "image": \#(image), "isOnline": null}]"#
        let (ada, bots) = try await seedUseSite(store: store, json: Data(second.utf8))
        let picture = Image(url: try #require(URL(string: "https://example.com/a.png")), width: 64, height: 48)
        #expect(ada == Member(id: 1, name: "Ada L.", kind: .human, image: picture, isOnline: true))
        #expect(bots.isEmpty, "R2's null cleared its flag")
        #expect(try await store.repository(Member.self).find(2)?.isOnline == nil)
    }

    @Test("the declarations take at most 20 lines, blank lines and comments aside")
    func declarationsFitTwentyLines() throws {
        let source = try String(
            contentsOfFile: #filePath.replacingOccurrences(of: "SeedSampleTests", with: "SeedSample"), encoding: .utf8)
        let start = try #require(source.range(of: "// readme:begin\n"))
        let end = try #require(source.range(of: "// readme:end", range: start.upperBound..<source.endIndex))
        let lines = source[start.upperBound..<end.lowerBound].split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && !$0.hasPrefix("//") }
        #expect(lines.count <= 20, "\(lines.count) lines")
        #expect(lines.count == 19, "the README says 19")
    }
}
