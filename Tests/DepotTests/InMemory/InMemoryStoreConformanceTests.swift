import Depot
import DepotTesting
import Testing

@Suite("InMemoryStore conformance", .timeLimit(.minutes(10)))
struct InMemoryStoreConformanceTests {
    @Test("in-memory store passes", arguments: StoreConformance.cases)
    func conformance(_ check: ConformanceCase) async throws {
        let store = InMemoryStore()
        #expect(try await store.repository(TestAirport.self).count() == 0, "each case starts on an empty store")
        try await check.run(on: store)
    }

    @Test("every conformance case has its own name")
    func namesAreUnique() {
        let names = StoreConformance.cases.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.count >= 47)
    }
}
