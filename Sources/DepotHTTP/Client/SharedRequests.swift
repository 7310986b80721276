import Synchronization

/// Identical requests in flight, sent once: every caller waits for the same exchange, and each
/// leaves on its own when its task is cancelled; the exchange is cancelled when the last one leaves.
final class SharedRequests: Sendable {
    /// What makes two calls the same request.
    struct Key: Hashable, Sendable {
        var endpoint: String
        var request: String
        var headers: HeaderFields
        var timeout: Duration
    }

    private struct Flight {
        var id: Int
        var task: Task<Void, Never>?
        var waiters: [Int: CheckedContinuation<TransportResponse, any Error>] = [:]
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        var lastID = 0
        /// How many callers have waited for an exchange, and who waits for that number (tests).
        var joined = 0
        var arrivals: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        mutating func nextID() -> Int {
            lastID += 1
            return lastID
        }
    }

    private let state = Mutex(State())

    /// How many exchanges are in flight (for tests).
    var inFlight: Int { state.withLock { $0.flights.count } }

    /// Returns once `count` callers in all have waited for an exchange (for tests: no clock).
    func arrivals(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state in
                if state.joined < count { state.arrivals.append((count, continuation)) }
                return state.joined >= count
            }
            if reached { continuation.resume() }
        }
    }

    /// The response of the exchange in flight for `key`, or of one `send` starts now.
    ///
    /// - Parameters:
    ///   - cancelled: What a caller whose task is cancelled throws.
    ///   - send: The exchange; it runs in a task of its own, so it outlives a caller that leaves.
    func response(
        for key: Key, cancelled: @escaping @Sendable () -> any Error,
        send: @escaping @Sendable () async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let waiter = state.withLock { $0.nextID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (started, arrived) = state.withLock { state -> (Int?, [CheckedContinuation<Void, Never>]) in
                    // Cancelled before waiting: the handler found no waiter to resume.
                    if Task.isCancelled {
                        continuation.resume(throwing: cancelled())
                        return (nil, [])
                    }
                    state.joined += 1
                    let arrived = state.arrivals.filter { $0.count <= state.joined }.map(\.continuation)
                    state.arrivals.removeAll { $0.count <= state.joined }
                    if state.flights[key] != nil {
                        state.flights[key]?.waiters[waiter] = continuation
                        return (nil, arrived)
                    }
                    let flight = state.nextID()
                    state.flights[key] = Flight(id: flight, waiters: [waiter: continuation])
                    return (flight, arrived)
                }
                for waiting in arrived { waiting.resume() }
                guard let flight = started else { return }
                let task = Task {
                    let outcome: Result<TransportResponse, any Error>
                    do {
                        outcome = .success(try await send())
                    } catch {
                        outcome = .failure(error)
                    }
                    let waiters = state.withLock { state -> [CheckedContinuation<TransportResponse, any Error>] in
                        guard state.flights[key]?.id == flight, let done = state.flights.removeValue(forKey: key)
                        else { return [] }
                        return Array(done.waiters.values)
                    }
                    for waiter in waiters { waiter.resume(with: outcome) }
                }
                let abandoned = state.withLock { state in
                    guard state.flights[key]?.id == flight else { return true }
                    state.flights[key]?.task = task
                    return false
                }
                // Every caller left before the task was recorded: nobody waits for it.
                if abandoned { task.cancel() }
            }
        } onCancel: {
            let (continuation, task) = state.withLock {
                state -> (CheckedContinuation<TransportResponse, any Error>?, Task<Void, Never>?) in
                guard let continuation = state.flights[key]?.waiters.removeValue(forKey: waiter) else {
                    return (nil, nil)
                }
                guard state.flights[key]?.waiters.isEmpty == true else { return (continuation, nil) }
                return (continuation, state.flights.removeValue(forKey: key)?.task)
            }
            continuation?.resume(throwing: cancelled())
            task?.cancel()
        }
    }
}
