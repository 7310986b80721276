import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import Foundation
import Testing

@Suite("README repositories with mappers")
struct MappersSampleTests {
    static let first = Data(
        #"""
        [{"identifier": "u1", "name": "Ada", "kind": "human", "isOnline": true,
          "image": {"url": "https://img.example/ada.png", "width": 64, "height": 64}},
         {"identifier": "u2", "name": "R2", "kind": "bot", "isOnline": true,
          "image": {"url": "https://img.example/r2.png", "width": 32, "height": 32}},
         {"identifier": "u3", "name": "C3", "kind": "bot", "isOnline": false}]
        """#.utf8)
    /// C3 comes online (its isOnline was false) and R2's image changes; R2 leaves isOnline out.
    static let second = Data(
        #"""
        [{"identifier": "u3", "name": "C3", "kind": "bot", "isOnline": true},
         {"identifier": "u2", "name": "R2-D2", "kind": "bot",
          "image": {"url": "https://img.example/r2-new.png", "width": 32, "height": 32}}]
        """#.utf8)

    static func check(_ store: any Store) async throws {
        let run = try await mappersUseSite(store: store, json: first, again: second)
        let ada = URL(string: "https://img.example/ada.png")
        let r2 = URL(string: "https://img.example/r2.png")
        #expect(
            run.stored == [
                User(id: "u1", name: "Ada", kind: .human, isOnline: true, avatar: ada),
                User(id: "u2", name: "R2", kind: .bot, isOnline: true, avatar: r2),
                User(id: "u3", name: "C3", kind: .bot, isOnline: false, avatar: nil),
            ])
        #expect(run.bots == [run.stored[1]])
        #expect(run.firstList == run.bots)
        #expect(
            run.secondList == [
                User(id: "u3", name: "C3", kind: .bot, isOnline: true, avatar: nil),
                User(
                    id: "u2", name: "R2-D2", kind: .bot, isOnline: true,
                    avatar: URL(string: "https://img.example/r2-new.png")),
            ])
        // The users kept their local keys; both of R2's images are stored (others may show them).
        #expect(try await store.repository(UserEntity.self).count() == 3)
        #expect(try await store.repository(ImageEntity.self).count() == 3)
    }

    @Test(
        "the walk persists responses with their images, returns models, queries and observes them", arguments: [0, 1])
    func walk(store kind: Int) async throws {
        try await Self.check(kind == 0 ? InMemoryStore() : try SQLiteStore.temporary())
    }

    @Test(
        "the walk answers the same on PostgreSQL",
        .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"))
    func walkOnPostgres() async throws {
        var configuration = try PostgresStore.Configuration(url: try PostgresEnvironment.requireURL())
        configuration.schema = PostgresEnvironment.scratchSchemaName()
        configuration.maximumConnections = 2
        let store = PostgresStore(configuration: configuration)
        try await withCleanup {
            try await Self.check(store)
        } cleanup: {
            try? await store.dropSchema()
            await store.close()
        }
    }

    @Test("the walk's declarations take at most 42 lines, blank lines and comments aside")
    func declarationsCount() throws {
        let source = try String(
            contentsOfFile: #filePath.replacingOccurrences(of: "MappersSampleTests", with: "MappersSample"),
            encoding: .utf8)
        var lines: [Substring] = []
        var rest = source[...]
        for _ in 0..<2 {
            let start = try #require(rest.range(of: "// readme:begin\n"))
            let end = try #require(rest.range(of: "// readme:end", range: start.upperBound..<rest.endIndex))
            lines += rest[start.upperBound..<end.lowerBound].split(separator: "\n")
            rest = rest[end.upperBound...]
        }
        let code = lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("//") }
        #expect(code.count <= 42, "\(code.count) lines")
        #expect(code.count == 42, "the README says 42")
    }
}
