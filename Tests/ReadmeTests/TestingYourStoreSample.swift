// swift-format-ignore-file: OrderedImports
// The README's "Testing your own store" sample, verbatim between the markers
// (ReadmeSampleTests checks it): the conformance suite on the in-memory store.
// readme:begin
import Depot
import DepotTesting
import Testing

@Test(arguments: StoreConformance.cases)
func conformance(_ check: ConformanceCase) async throws {
    try await check.run(on: InMemoryStore())
}
// readme:end

@Test("the sample's argument list is the whole suite, each case named once")
func sampleRunsTheWholeSuite() {
    let names = StoreConformance.cases.map(\.name)
    #expect(names.count > 70)
    #expect(Set(names).count == names.count)
}
