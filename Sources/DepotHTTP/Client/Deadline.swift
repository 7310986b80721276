import Dispatch
import Synchronization

/// Call deadlines.
///
/// Transports' own timeouts differ (URLSession's sub-second timeouts fire after a few
/// milliseconds on Linux; AsyncHTTPClient's bound only the response head), so the client keeps
/// the deadline itself: at the deadline it fires the call's ``TransportInterruption``, which
/// ends the exchange in flight. One process-wide ``Watchdog`` keeps every pending deadline
/// behind a single dispatch timer, armed for the earliest one: a call costs a dictionary entry,
/// not a task or a timer of its own.
enum Deadline {
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
