import Depot
import DepotTestSupport
import Testing

@Suite("In-memory store soak", .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct InMemorySoakTests {
    @Test(
        "8 writers moving money, 8 readers summing and 2 observers at once: no torn total, no lost transfer, no error, observers end on the final state"
    )
    func soak() async throws {
        try await HeavyHarness.run {
            let report = try await SoakChecks.run(on: InMemoryStore())
            print("in-memory soak: \(report)")
            #expect(report.transfers == 8 * SoakChecks.transfersPerWriter && report.observed > 0, "\(report)")
        }
    }
}
