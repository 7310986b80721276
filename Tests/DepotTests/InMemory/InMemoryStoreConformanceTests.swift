import Depot
import DepotTesting
import Testing

@Suite("InMemoryStore conformance")
struct InMemoryStoreConformanceTests {
    @Test("in-memory store passes", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        try await check.run(on: InMemoryStore())
    }
}
