import DepotTestSupport
import Testing

@Suite("Heavy harness")
struct HeavyHarnessTests {
    @Test("a harness past its own bound is cancelled and fails naming the bound, and the next harness gets the machine")
    func harnessPastItsBoundFails() async throws {
        let error = await #expect(throws: HeavyHarness.TimedOut.self) {
            try await HeavyHarness.run(limit: .milliseconds(20)) {
                try await Task.sleep(for: .seconds(3600))
            }
        }
        #expect(error?.limit == .milliseconds(20))
        #expect(error?.description.contains("after the queue") == true)
        let value = try await HeavyHarness.run { 42 }
        #expect(value == 42)
    }

    @Test("a harness's own error passes through unchanged")
    func harnessErrorPassesThrough() async throws {
        struct Broken: Error, Equatable {}
        await #expect(throws: Broken()) {
            try await HeavyHarness.run { throw Broken() }
        }
    }
}
