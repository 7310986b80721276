import Observation

/// A query's current results as an `@Observable` object, for views that bind to a query.
///
/// ```swift
/// @State var norwegian = LiveQuery(store.repository(Airport.self),
///                                  where: \.country == "NO", orderBy: [.ascending(\.name)])
/// var body: some View { List(norwegian.results, id: \.icao) { Text($0.name) } }
/// ```
/// It starts observing when created and stops when released (or on ``stop()``). Errors end the
/// observation and are kept in ``error``.
@MainActor
@Observable
public final class LiveQuery<Root: Entity> {
    /// The latest results.
    public private(set) var results: [Root] = []
    /// Whether the first result has arrived.
    public private(set) var isLoaded = false
    /// The error that ended the observation, if any.
    public private(set) var error: (any Error)?

    @ObservationIgnored private var task: Task<Void, Never>?

    /// Observes `predicate` on `repository`, in `ordering`, at most `limit` rows.
    public init(
        _ repository: Repository<Root>, where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, timing: ObservationTiming = .immediate
    ) {
        let observation = repository.observe(where: predicate, orderBy: ordering, limit: limit, timing: timing)
        task = Task { [weak self] in
            do {
                for try await list in observation {
                    guard let self else { return }
                    self.results = list
                    self.isLoaded = true
                }
            } catch is CancellationError {
                return
            } catch {
                self?.error = error
            }
        }
    }

    /// Stops observing; ``results`` keeps its last value.
    public func stop() {
        task?.cancel()
        task = nil
    }

    isolated deinit {
        task?.cancel()
    }
}
