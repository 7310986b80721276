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
        let (firings, firing) = AsyncStream.makeStream(of: (offset: Int, after: Duration).self)
        let start = ContinuousClock.now
        for offset in offsets {
            _ = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(offset)) {
                firing.yield((offset, ContinuousClock.now - start))
            }
        }
        // The watchdog calls each action once, in turn, on its queue: the stream has them in order.
        var fired: [(offset: Int, after: Duration)] = []
        for await entry in firings.prefix(offsets.count) { fired.append(entry) }
        #expect(fired.map(\.offset) == offsets.sorted(), "fired out of order: \(fired)")
        for (offset, after) in fired {
            #expect(after >= .milliseconds(offset - 2), "\(offset) ms deadline fired early, after \(after)")
        }
        print("watchdog: deadlines of \(offsets.sorted()) ms fired after \(fired.map(\.after))")
    }

    @Test("a removed deadline never fires, and the ones around it still do")
    func removedNeverFires() async throws {
        let start = ContinuousClock.now
        let calls = Box<[String]>([])
        let kept = Signal()
        let removed = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(50)) {
            calls.update { $0.append("removed") }
        }
        _ = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(150)) {
            calls.update { $0.append("kept") }
            kept.fire()
        }
        Deadline.Watchdog.shared.remove(removed)
        // Deadlines fire in time order, so once the later one has fired the removed one never will.
        await kept.wait()
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
        let started = Signal()
        let cancelled = Signal()
        let released = Signal()
        // Fired once the operation runs, from outside the race, as the deadline watchdog does.
        let firing = Task {
            await started.wait()
            interruption.interrupt()
        }
        await #expect(throws: CancellationError.self) {
            try await interruption.race {
                // Ignores cancellation (noting it) until the test releases it, which it does only
                // after the race answered: the race cannot have waited for it.
                await withTaskCancellationHandler {
                    started.fire()
                    await released.wait()
                } onCancel: {
                    cancelled.fire()
                }
                return 1
            }
        }
        await firing.value
        await cancelled.wait()
        released.fire()
    }

    @Test("a race whose interruption already fired, or whose caller is cancelled, ends without starting its operation")
    func raceAfterInterruption() async throws {
        // Before the fix the operation's task started first and the interruption was checked after:
        // `{ 1 }` could answer before that check and win, under load (DeadlineTests:75 on CI).
        let starts = Atomic<Int>(0)
        let start: (@escaping @Sendable () async -> Void) -> Task<Void, Never> = { body in
            starts.add(1, ordering: .sequentiallyConsistent)
            return Task(operation: body)
        }
        let interruption = TransportInterruption()
        interruption.interrupt()
        await #expect(throws: CancellationError.self) { try await interruption.race({ 1 }, start: start) }
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await TransportInterruption().race({ 1 }, start: start)
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(starts.load(ordering: .sequentiallyConsistent) == 0, "the operation was started")
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

    @Test(
        "a transport without its own interruption support is raced in a task and stops when interrupted",
        .timeLimit(.minutes(10)))
    func defaultTransportInterruption() async throws {
        let cancelled = Signal()
        let released = Signal()
        let held = HeldTransport(cancelled: cancelled, released: released)
        let request = TransportRequest(method: .get, url: try #require(URL(string: "https://api.test/slow")))
        let interruption = TransportInterruption()
        _ = Deadline.Watchdog.shared.schedule(at: .now + .milliseconds(100)) { interruption.interrupt() }
        // The transport answers only once released, which the test does after the race answered:
        // the race did not wait for it (a race that did would hang until the time limit).
        await #expect(throws: CancellationError.self) {
            try await held.send(request, maximumBodySize: 1 << 20, interruption: interruption)
        }
        await cancelled.wait()  // and its task was cancelled
        released.fire()

        let stub = StubTransport()
        stub.stub(.get, "/fast", .status(204))
        var fast = request
        fast.url = try #require(URL(string: "https://api.test/fast"))
        let response = try await stub.send(fast, maximumBodySize: 1 << 20, interruption: TransportInterruption())
        #expect(response.status == 204)
    }
}

/// A transport without interruption support (only `send(_:maximumBodySize:)`) that ignores
/// cancellation, noting it, and answers once `released` fires.
private struct HeldTransport: Transport {
    let cancelled: Signal
    let released: Signal

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        await withTaskCancellationHandler {
            await released.wait()
        } onCancel: {
            cancelled.fire()
        }
        return TransportResponse(status: 200)
    }
}

/// A value shared by concurrent closures.
private final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
