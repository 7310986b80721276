import Dispatch
import Synchronization

/// Races an operation against a deadline.
///
/// Transports' own timeouts differ (URLSession's sub-second timeouts fire after a few
/// milliseconds on Linux; AsyncHTTPClient's bound only the response head), so the client runs
/// the call in a task of its own and answers at the deadline: the caller gets ``Exceeded`` when
/// the deadline passes and the task is cancelled, without waiting for it to wind down — so code
/// that ignores cancellation (a token provider, a shared refresh) cannot hold a call past its
/// deadline. Cancelling the caller likewise answers at once with `CancellationError`.
///
/// One process-wide ``Watchdog`` keeps every pending deadline behind a single dispatch timer,
/// armed for the earliest one: a request costs one task and a dictionary entry, not a task
/// group, a second task and a timer of its own (which cost more than a loopback request's
/// transport time at 16-way concurrency).
enum Deadline {
    /// The deadline passed before the operation finished.
    struct Exceeded: Error {}

    static func race<Value: Sendable>(
        until deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let race = Race<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.await(continuation)
                let task = Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                let token = Watchdog.shared.schedule(at: deadline) {
                    race.finish(.failure(Exceeded()))
                }
                race.attach(task, token)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first outcome of a race (the operation's, the deadline's or the caller's cancellation)
    /// resumes the caller; the others are dropped. Whatever ends the race cancels the task and
    /// forgets the deadline.
    private final class Race<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value, any Error>?
            var outcome: Result<Value, any Error>?
            var task: Task<Void, Never>?
            var token: Watchdog.Token?
        }

        private let state = Mutex(State())

        func await(_ continuation: CheckedContinuation<Value, any Error>) {
            let early = state.withLock { state -> Result<Value, any Error>? in
                if let outcome = state.outcome { return outcome }  // cancelled before it started
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        func attach(_ task: Task<Void, Never>, _ token: Watchdog.Token) {
            let finished = state.withLock { state -> Bool in
                state.task = task
                state.token = token
                return state.outcome != nil
            }
            if finished { end(task, token) }
        }

        func finish(_ outcome: Result<Value, any Error>) {
            let (continuation, task, token) = state.withLock { state in
                guard state.outcome == nil else {
                    return (CheckedContinuation<Value, any Error>?.none, Task<Void, Never>?.none, Watchdog.Token?.none)
                }
                state.outcome = outcome
                defer { state.continuation = nil }
                return (state.continuation, state.task, state.token)
            }
            if let task, let token { end(task, token) }
            continuation?.resume(with: outcome)
        }

        private func end(_ task: Task<Void, Never>, _ token: Watchdog.Token) {
            task.cancel()
            Watchdog.shared.remove(token)
        }
    }

    /// Pending deadlines and one dispatch timer armed for the earliest.
    ///
    /// Removing an entry leaves the timer alone: when it fires with nothing due it re-arms for
    /// the earliest remaining deadline (or stops when there is none). A deadline later than the
    /// armed one touches no timer at all.
    final class Watchdog: Sendable {
        static let shared = Watchdog()

        struct Token: Sendable {
            fileprivate let id: UInt64
        }

        private struct Entry {
            var deadline: ContinuousClock.Instant
            var action: @Sendable () -> Void
        }

        private struct State {
            var entries: [UInt64: Entry] = [:]
            var nextID: UInt64 = 0
            /// When the timer fires next; `nil` while it is idle.
            var armedFor: ContinuousClock.Instant?
        }

        private let state = Mutex(State())
        private let timer: UnsafeTransfer<any DispatchSourceTimer>
        private static let queue = DispatchQueue(label: "DepotHTTP.deadline")

        private init() {
            let source = DispatchSource.makeTimerSource(queue: Self.queue)
            timer = UnsafeTransfer(source)
            source.setEventHandler { [weak self] in self?.fire() }
            source.schedule(deadline: .distantFuture)
            source.resume()
        }

        /// Calls `action` (once, on the watchdog's queue) when `deadline` passes, unless the
        /// token is removed first.
        func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
            let id = state.withLock { state -> UInt64 in
                let id = state.nextID
                state.nextID &+= 1
                state.entries[id] = Entry(deadline: deadline, action: action)
                if state.armedFor.map({ deadline < $0 }) ?? true {
                    state.armedFor = deadline
                    arm(for: deadline)
                }
                return id
            }
            return Token(id: id)
        }

        /// Forgets a deadline that did not pass.
        func remove(_ token: Token) {
            _ = state.withLock { $0.entries.removeValue(forKey: token.id) }
        }

        private func fire() {
            let now = ContinuousClock.now
            let due = state.withLock { state -> [@Sendable () -> Void] in
                var due: [@Sendable () -> Void] = []
                var next: ContinuousClock.Instant?
                for (id, entry) in state.entries {
                    if entry.deadline <= now {
                        due.append(entry.action)
                        state.entries[id] = nil
                    } else if next.map({ entry.deadline < $0 }) ?? true {
                        next = entry.deadline
                    }
                }
                state.armedFor = next
                if let next { arm(for: next) }
                return due
            }
            for action in due { action() }
        }

        /// Points the timer at `deadline`; called under the lock, so the timer and `armedFor`
        /// always agree.
        private func arm(for deadline: ContinuousClock.Instant) {
            let nanoseconds = max(0, (deadline - .now).saturatingNanoseconds)
            let when: DispatchTime =
                nanoseconds >= Int64(Int.max) / 2 ? .distantFuture : .now() + .nanoseconds(Int(nanoseconds))
            timer.value.schedule(deadline: when, leeway: .milliseconds(1))
        }
    }
}

/// Holds a value that is not annotated `Sendable` but is thread-safe (a dispatch source).
private struct UnsafeTransfer<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
