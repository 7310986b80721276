import DepotHTTP
import Foundation
import Testing

@Suite("Activity tracking")
struct ActivityTrackerTests {
    @Test("A new observer gets the current count first; failures and cancellations count down too")
    func counts() async throws {
        let activity = ActivityTracker()
        let stub = StubTransport()
        stub.stub(.get, "/slow", .status(200, after: .seconds(3_600)))
        stub.stub(.get, "/fail", .failure(.connectionFailed))
        let client = APIClient(
            baseURL: StubTransportTests.base, transport: stub,
            configuration: .testing(retryPolicy: .none, middleware: [activity]))
        var first = activity.inFlightCounts.makeAsyncIterator()
        #expect(await first.next() == 0)
        let task = Task { try await client.send(Call(.get, "/slow")) }
        // The count goes up once the call is in the tracker, however long it took to get a thread.
        #expect(await first.next() == 1)
        var iterator = activity.inFlightCounts.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        _ = await httpError { try await client.send(Call(.get, "/fail")) }
        task.cancel()
        _ = await task.result
        #expect(activity.inFlight == 0)
        #expect(await iterator.next() == 0)
    }
}
