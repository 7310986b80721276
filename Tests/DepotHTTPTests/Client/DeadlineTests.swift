import Foundation
import Synchronization
import Testing

@testable import DepotHTTP

@Suite("Deadline watchdog")
struct DeadlineTests {
    @Test("deadlines scheduled latest-first each fire at their own time, never early")
    func laterThenEarlier() async throws {
        // Scheduled synchronously (not from tasks, which a busy cooperative pool may start late),
        // latest first: every new deadline is earlier than the armed one and must re-arm the timer.
        let offsets = [900, 700, 500, 300, 100]
        let fired = Box<[Int: Duration]>([:])
        let start = ContinuousClock.now
        for offset in offsets {
            _ = Deadline.Watchdog.shared.schedule(at: start + .milliseconds(offset)) {
                fired.update { $0[offset] = ContinuousClock.now - start }
            }
        }
        // The actions run on the watchdog's dispatch queue; wait until all have, or 10 s.
        for _ in 0..<100 where fired.value.count < offsets.count { try await Task.sleep(for: .milliseconds(100)) }
        for offset in offsets {
            let elapsed = try #require(fired.value[offset])
            #expect(elapsed >= .milliseconds(offset - 2), "\(offset) ms deadline fired after \(elapsed)")
            #expect(elapsed < .milliseconds(offset + 250), "\(offset) ms deadline fired after \(elapsed)")
        }
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
        try await Task.sleep(for: .milliseconds(400))
        #expect(calls.value == ["kept"])
    }

    @Test("an operation that beats its deadline returns its value; one that does not is cancelled")
    func raceOutcomes() async throws {
        let value = try await Deadline.race(until: .now + .seconds(120)) { 42 }
        #expect(value == 42)
        let cancelled = Atomic<Bool>(false)
        await #expect(throws: Deadline.Exceeded.self) {
            try await Deadline.race(until: .now + .milliseconds(100)) {
                do {
                    try await Task.sleep(for: .seconds(10))
                } catch {
                    cancelled.store(true, ordering: .sequentiallyConsistent)
                    throw error
                }
            }
        }
        // The caller is answered at the deadline; the abandoned operation sees its cancellation
        // right after.
        #expect(try await eventually { cancelled.load(ordering: .sequentiallyConsistent) })
        // An error of the operation's own is not a timeout.
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await Deadline.race(until: .now + .seconds(120)) { throw Boom() } }
    }
}

/// A value shared by concurrent closures.
private final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
