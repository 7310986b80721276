import DepotHTTP
import Foundation
import Testing

@Suite("Activity tracking")
struct ActivityTrackerTests {
    @Test("A new observer gets the current count first; failures and cancellations count down too")
    func counts() async throws {
        let activity = ActivityTracker()
        let stub = StubTransport()
        stub.stub(.get, "/slow", .status(200, after: .seconds(30)))
        stub.stub(.get, "/fail", .failure(.connectionFailed))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(retryPolicy: .none, middleware: [activity]))
        let task = Task { try await client.send(Call(.get, "/slow")) }
        #expect(try await eventually { activity.inFlight == 1 })
        var iterator = activity.inFlightCounts.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        _ = await httpError { try await client.send(Call(.get, "/fail")) }
        task.cancel()
        _ = await task.result
        #expect(activity.inFlight == 0)
        #expect(await iterator.next() == 0)
    }
}
