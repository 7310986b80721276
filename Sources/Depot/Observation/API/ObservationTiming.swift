import Synchronization

/// When an observation re-queries after commits that touch its table.
public enum ObservationTiming: Sendable, Hashable {
    /// As soon as the consumer asks after a commit (commits made meanwhile coalesce).
    case immediate
    /// Once commits have stopped for the interval: a burst gives one element.
    ///
    /// With `maxWait`, a burst that never pauses for the interval still gives an element at least
    /// every `maxWait`, counted from the first commit the observer waits for, so a steady stream
    /// of writes cannot keep a screen on a stale result:
    ///
    /// ```swift
    /// // Quiet for 200 ms, or at most a second behind however busy the table is.
    /// airports.observe(timing: .debounce(.milliseconds(200), maxWait: .seconds(1)))
    /// ```
    case debounce(Duration, maxWait: Duration? = nil)
    /// At most one element per interval.
    case throttle(Duration)
}
