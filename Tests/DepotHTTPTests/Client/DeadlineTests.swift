import Foundation
import Synchronization
import Testing

@testable import DepotHTTP

@Suite("Deadline watchdog")
struct DeadlineTests {
    @Test("deadlines scheduled latest-first fire in their own order, each at or after its time")
    func laterThenEarlier() async throws {
        // Scheduled synchronously (not from tasks, which a busy cooperative pool may start late),
        // latest first: every new deadline is earlier than the armed one and must re-arm the timer.
        // How late each fires is printed, not asserted: that is the machine's load, measured by
        // depot-http-bench, not a behaviour.
        let offsets = [900, 700, 500, 300, 100]
        let fired = Box<[(offset: Int, after: Duration)]>([])
        let start = ContinuousClock.now
        for offset in offsets {
            _ = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(offset)) {
                fired.update { $0.append((offset, ContinuousClock.now - start)) }
            }
        }
        #expect(try await eventually { fired.value.count == offsets.count })
        #expect(fired.value.map(\.offset) == offsets.sorted(), "fired out of order: \(fired.value)")
        for (offset, after) in fired.value {
            #expect(after >= .milliseconds(offset - 2), "\(offset) ms deadline fired early, after \(after)")
        }
        print("watchdog: deadlines of \(offsets.sorted()) ms fired after \(fired.value.map(\.after))")
    }

    @Test("a removed deadline never fires, and the ones around it still do")
    func removedNeverFires() async throws {
        let start = ContinuousClock.now
        let calls = Box<[String]>([])
        let removed = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(50)) {
            calls.update { $0.append("removed") }
        }
        _ = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(150)) { calls.update { $0.append("kept") } }
        Deadline.Watchdog.shared.remove(removed)
        // Deadlines fire in time order, so once the later one has fired the removed one never will.
        #expect(try await eventually { calls.value.contains("kept") })
        #expect(calls.value == ["kept"])
    }

}

@Suite("Transport interruption")
struct TransportInterruptionTests {
    @Test("a race returns the operation's value or error; an interruption answers at once and cancels it")
    func raceOutcomes() async throws {
        let value = try await TransportInterruption().race { 42 }
        #expect(value == 42)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await TransportInterruption().race { throw Boom() } }

        let interruption = TransportInterruption()
        let cancelled = Atomic<Bool>(false)
        let released = Atomic<Bool>(false)
        let started = ContinuousClock.now
        _ = Deadline.Watchdog.shared.schedule(at: started + .milliseconds(100)) { interruption.interrupt() }
        await #expect(throws: CancellationError.self) {
            try await interruption.race {
                // Ignores cancellation until the test releases it, which it does only after the race
                // answered: the race cannot have waited for it.
                while !released.load(ordering: .sequentiallyConsistent) {
                    if Task.isCancelled { cancelled.store(true, ordering: .sequentiallyConsistent) }
                    await sleepIgnoringCancellation(milliseconds: 10)
                }
                return 1
            }
        }
        #expect(try await eventually { cancelled.load(ordering: .sequentiallyConsistent) })
        released.store(true, ordering: .sequentiallyConsistent)
        // Once fired, a race ends before its operation can answer.
        await #expect(throws: CancellationError.self) { try await interruption.race { 1 } }
    }

    @Test(
        "a handler runs when the interruption fires during its operation, at once if it had fired, not once it returned"
    )
    func handlerScope() async throws {
        let interruption = TransportInterruption()
        let calls = Box<[String]>([])
        _ = try await interruption.whileRunning(onInterrupt: { calls.update { $0.append("finished first") } }) { 1 }
        try await interruption.whileRunning(onInterrupt: { calls.update { $0.append("during") } }) {
            interruption.interrupt()
            interruption.interrupt()  // idempotent
        }
        #expect(interruption.isInterrupted)
        try await interruption.whileRunning(onInterrupt: { calls.update { $0.append("already") } }) {
            #expect(calls.value.last == "already", "the handler runs before the operation")
        }
        #expect(calls.value == ["during", "already"])
    }

    @Test("a transport without its own interruption support is raced in a task and stops when interrupted")
    func defaultTransportInterruption() async throws {
        let stub = StubTransport()
        stub.stub(.get, "/slow", .status(200, after: .seconds(3_600)))
        stub.stub(.get, "/fast", .status(204))
        let request = TransportRequest(method: .get, url: try #require(URL(string: "https://api.test/slow")))
        let interruption = TransportInterruption()
        let started = ContinuousClock.now
        _ = Deadline.Watchdog.shared.schedule(at: started + .milliseconds(100)) { interruption.interrupt() }
        await #expect(throws: CancellationError.self) {
            try await stub.send(request, maximumBodySize: 1 << 20, interruption: interruption)
        }
        #expect(ContinuousClock.now - started < .seconds(600), "the race waited for the hour-long answer")
        var fast = request
        fast.url = try #require(URL(string: "https://api.test/fast"))
        let response = try await stub.send(fast, maximumBodySize: 1 << 20, interruption: TransportInterruption())
        #expect(response.status == 204)
    }
}

/// A value shared by concurrent closures.
private final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
