import Synchronization

/// When an observation re-queries after commits that touch its table.
public enum ObservationTiming: Sendable, Hashable {
    /// As soon as the consumer asks after a commit (commits made meanwhile coalesce).
    case immediate
    /// Once commits have stopped for the interval: a burst gives one element.
    case debounce(Duration)
    /// At most one element per interval.
    case throttle(Duration)
}
