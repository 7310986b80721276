import DepotTestProcess
import DepotTestSupport
import Foundation
import Synchronization
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

    @Test(
        "a harness that ignores cancellation fails at its bound without waiting for it, so a hang cannot hold the run"
    )
    func harnessIgnoringCancellationFailsAtItsBound() async throws {
        final class Parked: Sendable {
            let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
        }
        let parked = Parked()
        await #expect(throws: HeavyHarness.TimedOut.self) {
            try await HeavyHarness.run(limit: .milliseconds(20)) {
                // Deaf to cancellation: only the test lets it go, after the harness has failed.
                await withCheckedContinuation { continuation in parked.continuation.withLock { $0 = continuation } }
            }
        }
        while true {
            if let continuation = parked.continuation.withLock({ $0.take() }) {
                continuation.resume()
                break
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(try await HeavyHarness.run { 7 } == 7)
    }

    @Test("a harness's own error passes through unchanged")
    func harnessErrorPassesThrough() async throws {
        struct Broken: Error, Equatable {}
        await #expect(throws: Broken()) {
            try await HeavyHarness.run { throw Broken() }
        }
    }
}

@Suite("Test process")
struct TestProcessTests {
    @Test("the test process runs a bounded number of tests at once: its default width, or the caller's own")
    func parallelizationWidthIsBounded() {
        let width = ProcessInfo.processInfo.environment["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"]
        #expect(width != nil)
        #expect(width.flatMap(Int.init).map { $0 >= 1 } == true, "\(width ?? "unset")")
        #expect(depot_test_process_default_width() == 8)
    }
}

@Suite("Deadline")
struct DeadlineTests {
    @Test("a piece past its bound fails naming what hung and the bound; one within it returns its value")
    func deadlineNamesWhatHung() async throws {
        let error = await #expect(throws: Deadline.Exceeded.self) {
            try await Deadline.run("closing the store", limit: .milliseconds(20)) {
                try await Task.sleep(for: .seconds(3600))
            }
        }
        #expect(error?.what == "closing the store")
        #expect(error?.description.contains("closing the store did not finish within") == true)
        #expect(try await Deadline.run("adding", limit: .seconds(600)) { 2 + 2 } == 4)
    }
}
