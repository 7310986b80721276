/// A store whose observers' work is measured: each re-query an observed query runs after a commit,
/// how long it took and how long after the commit its result was ready. The SQL stores conform
/// and report it through swift-metrics (`depot_observation_requeries_total`,
/// `depot_observation_requery_duration_seconds`, `depot_observation_latency_seconds`).
///
/// A store of your own conforms to report to its own metrics:
///
/// ```swift
/// extension MyStore: ObservationReporting {
///     var isReportingObservations: Bool { true }
///     func observationRequeried(duration: Duration, sinceCommit: Duration?) {
///         requeryTimer.record(duration: duration)
///     }
/// }
/// ```
public protocol ObservationReporting: Sendable {
    /// Whether anything is reported: when false, observers read no clock for it.
    var isReportingObservations: Bool { get }

    /// One query that observers share ran again: it took `duration` (the wait for the store's
    /// one re-query at a time included), and its result was ready `sinceCommit` after the store
    /// announced the commit that woke it (`nil` for an observation's first result).
    func observationRequeried(duration: Duration, sinceCommit: Duration?)
}
