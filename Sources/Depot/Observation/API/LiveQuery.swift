import Observation

/// A query's current results as an `@Observable` object, for views that bind to a query.
///
/// ```swift
/// struct NorwayList: View {
///     @State private var norway: LiveQuery<Airport>
///
///     init(store: any Store) {
///         _norway = State(initialValue: LiveQuery(store.repository(Airport.self),
///                                                 where: \.country == "NO", orderBy: [.ascending(\.name)]))
///     }
///
///     var body: some View { List(norway.results, id: \.icao) { Text($0.name) } }
/// }
/// ```
/// It starts observing when one of its properties is first read (a `LiveQuery` made and dropped
/// unread, as SwiftUI does with a `@State` initial value on every update of the parent, costs
/// nothing), and stops when released or on ``stop()``. Errors end the observation and are kept
/// in ``error``.
@MainActor
@Observable
public final class LiveQuery<Root: Entity> {
    /// The latest results (empty until the first arrive).
    public var results: [Root] {
        runner.startIfNeeded()
        return latest
    }
    /// Whether the first result has arrived.
    public var isLoaded: Bool {
        runner.startIfNeeded()
        return loaded
    }
    /// The error that ended the observation, if any.
    public var error: (any Error)? {
        runner.startIfNeeded()
        return failure
    }

    private var latest: [Root] = []
    private var loaded = false
    private var failure: (any Error)?
    @ObservationIgnored private var runner: LiveRunner!

    /// Observes `predicate` on `repository`, in `ordering`, at most `limit` rows (from the first
    /// read of a property on).
    public init(
        _ repository: Repository<Root>, where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) {
        runner = LiveRunner(
            { repository.observe(where: predicate, orderBy: ordering, limit: limit, timing: timing) },
            receive: { [weak self] list in
                guard let self else { return false }
                self.latest = list
                self.loaded = true
                return true
            },
            fail: { [weak self] error in self?.failure = error })
    }

    /// Whether the observation has started (a property was read).
    package var hasStarted: Bool { runner.hasStarted }

    /// Stops observing; ``results`` keeps its last value.
    public func stop() { runner.stop() }
}
