import Synchronization

/// Counts the requests in flight, as a number and as an `AsyncSequence` — what drives a
/// network activity indicator.
///
/// ```swift
/// let activity = ActivityTracker()
/// configuration.middleware = [activity]
///
/// for await count in activity.inFlightCounts {
///     spinner.isAnimating = count > 0
/// }
/// ```
///
/// A request counts from when it enters the tracker until its response or error leaves it,
/// retries and backoff included.
public final class ActivityTracker: Middleware {
    private struct State {
        var count = 0
        var nextID = 0
        var observers: [Int: AsyncStream<Int>.Continuation] = [:]
    }

    private let state = Mutex(State())

    /// A tracker with nothing in flight.
    public init() {}

    /// The number of requests in flight now.
    public var inFlight: Int { state.withLock { $0.count } }

    /// The current count, then every change. A slow consumer gets the latest count, not a
    /// backlog; the stream ends when the consumer stops iterating.
    public var inFlightCounts: AsyncStream<Int> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = continuation
            continuation.yield(state.count)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Counts `request` as in flight until the rest of the chain answers, then passes the response
    /// or error on unchanged.
    public func intercept(_ request: TransportRequest, context: MiddlewareContext, next: Next) async throws
        -> TransportResponse
    {
        change(by: 1)
        defer { change(by: -1) }
        return try await next(request)
    }

    private func change(by delta: Int) {
        state.withLock { state in
            state.count += delta
            for continuation in state.observers.values { continuation.yield(state.count) }
        }
    }
}
