import Depot
import Synchronization
import Testing

@Suite("Async permits")
struct AsyncPermitsTests {
    @Test("two permits let two tasks in; the third waits until one is given back, then takes it")
    func thirdWaitsForARelease() async throws {
        let permits = AsyncPermits(2)
        try await permits.acquire()
        try await permits.acquire()
        #expect(permits.available == 0)
        final class Flag: Sendable { let value = Atomic(false) }
        let entered = Flag()
        let third = Task {
            try await permits.acquire()
            entered.value.store(true, ordering: .sequentiallyConsistent)
        }
        // The third has not entered while both permits are held (it is queued, not refused).
        for _ in 0..<100 { await Task.yield() }
        let early = entered.value.load(ordering: .sequentiallyConsistent)
        #expect(!early)
        permits.release()
        try await third.value
        let late = entered.value.load(ordering: .sequentiallyConsistent)
        #expect(late)
        #expect(permits.available == 0)
        permits.release()
        permits.release()
        #expect(permits.available == 2)
    }

    @Test("a waiter cancelled while it waits throws CancellationError and takes no permit")
    func cancelledWaiterTakesNothing() async throws {
        let permits = AsyncPermits(1)
        try await permits.acquire()
        let waiter = Task { try await permits.acquire() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        permits.release()
        #expect(permits.available == 1)
    }
}

@Suite("AsyncLock")
struct AsyncLockTests {
    @Test("the lock lets one task in at a time, and only its holder is told it holds it")
    func oneAtATime() async throws {
        let lock = AsyncLock()
        final class Inside: Sendable {
            let now = Mutex(0)
            let most = Mutex(0)
            let entered = Mutex(0)
        }
        let inside = Inside()
        try await lock.lock()
        let waiters = (1...3).map { _ in
            Task {
                try await lock.withLock {
                    #expect(lock.isHeldByCurrentTask)
                    let now = inside.now.withLock { now in
                        now += 1
                        return now
                    }
                    inside.most.withLock { $0 = max($0, now) }
                    for _ in 0..<20 { await Task.yield() }
                    inside.now.withLock { $0 -= 1 }
                    inside.entered.withLock { $0 += 1 }
                }
            }
        }
        for _ in 0..<100 { await Task.yield() }
        #expect(inside.entered.withLock { $0 } == 0, "nobody enters while the lock is held")
        #expect(!lock.isHeldByCurrentTask, "lock() without withLock does not mark the task")
        lock.unlock()
        for waiter in waiters { try await waiter.value }
        #expect(inside.entered.withLock { $0 } == 3)
        #expect(inside.most.withLock { $0 } == 1)
    }
}
