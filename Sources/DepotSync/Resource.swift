import Depot
import DepotHTTP
import Foundation
import Observation

/// When a resource asks the network.
public enum RefreshPolicy: Sendable, Equatable {
    /// Never: the local rows only (previews, or data another sync keeps fresh).
    case localOnly
    /// Only when the resource was never refreshed: what is stored is good enough once it exists.
    case cacheFirst
    /// Every time it is observed, before the first rows are handed out (they come from the store
    /// after the refresh, or as they are when it fails).
    case networkFirst
    /// The stored rows at once, and a refresh in the background when the last one is older than
    /// `maxAge` (or there was none).
    case staleWhileRevalidate(maxAge: Duration)
}

/// A screen's data declared once: the endpoint that brings it, the mapper that stores it and the
/// query that reads it back.
///
/// ```swift
/// let norway = Resource(
///     AirportsAPI.List(country: "NO", limit: 1_000), mapper: AirportRecordMapper(),
///     where: \.country == "NO", orderBy: [.ascending(\.name)],
///     policy: .staleWhileRevalidate(maxAge: .seconds(300)))
/// for try await snapshot in loader.observe(norway) {
///     show(snapshot.rows, spinner: snapshot.refresh.isRefreshing)
/// }
/// ```
///
/// A resource can be one object, from an endpoint that answers one (``init(one:mapper:where:policy:key:)``):
///
/// ```swift
/// func airport(_ icao: String) -> Resource<AirportsAPI.Get, AirportRecordMapper> {
///     Resource(one: AirportsAPI.Get(icao: icao), mapper: AirportRecordMapper(), where: \.icao == icao)
/// }
/// let engm = try await loader.load(airport("ENGM")).first  // stored, or fetched then stored
/// ```
public struct Resource<Request: Endpoint, Mapper: PatchMapper>: Sendable where Mapper.Target: Entity {
    /// The stored entity.
    public typealias Root = Mapper.Target

    /// The request that refreshes it.
    public var request: Request
    /// The elements of a response, each stored through ``mapper``.
    let elements: @Sendable (Request.Response) -> [Mapper.Source]
    /// Turns each element of the response into a patch: absent fields stay as stored.
    public var mapper: Mapper
    /// The rows the resource shows.
    public var predicate: Filter<Root>?
    /// Their order.
    public var ordering: [Ordering<Root>]
    /// At most this many.
    public var limit: Int?
    /// When to ask the network.
    public var policy: RefreshPolicy
    /// What identifies it: refreshes of the same key in flight are shared, and its last refresh is
    /// stored under it. By default the request's method, path and query.
    public var key: String

    /// A resource from its parts, refreshed by an endpoint answering a list.
    public init(
        _ request: Request, mapper: Mapper, where predicate: Filter<Root>? = nil,
        orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, policy: RefreshPolicy = .cacheFirst, key: String? = nil
    ) where Request.Response: Sequence, Request.Response.Element == Mapper.Source {
        self.init(
            request, elements: { Array($0) }, mapper: mapper, predicate: predicate, ordering: ordering, limit: limit,
            policy: policy, key: key)
    }

    /// A resource of one object, refreshed by an endpoint answering that object; `predicate`
    /// finds its row (by its key, say), and reading the resource gives at most that one row.
    ///
    /// ```swift
    /// let engm = Resource(one: AirportsAPI.Get(icao: "ENGM"), mapper: AirportRecordMapper(), where: \.icao == "ENGM")
    /// ```
    public init(
        one request: Request, mapper: Mapper, where predicate: Filter<Root>, policy: RefreshPolicy = .cacheFirst,
        key: String? = nil
    ) where Request.Response == Mapper.Source {
        self.init(
            request, elements: { [$0] }, mapper: mapper, predicate: predicate, ordering: [], limit: 1, policy: policy,
            key: key)
    }

    private init(
        _ request: Request, elements: @escaping @Sendable (Request.Response) -> [Mapper.Source], mapper: Mapper,
        predicate: Filter<Root>?, ordering: [Ordering<Root>], limit: Int?, policy: RefreshPolicy, key: String?
    ) {
        self.request = request
        self.elements = elements
        self.mapper = mapper
        self.predicate = predicate
        self.ordering = ordering
        self.limit = limit
        self.policy = policy
        let query = request.query.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
        self.key = key ?? "\(request.method.rawValue) \(request.path)" + (query.isEmpty ? "" : "?" + query)
    }
}

/// Where a resource's refresh stands, next to its rows.
public struct RefreshState: Sendable, CustomStringConvertible {
    /// Whether a refresh is running.
    public var isRefreshing: Bool
    /// Why the last refresh failed; `nil` after a success.
    public var error: (any Error)?
    /// When it was last refreshed successfully (stored, so it survives restarts); `nil` if never.
    public var lastRefreshed: Date?

    /// A state from its parts.
    public init(isRefreshing: Bool = false, error: (any Error)? = nil, lastRefreshed: Date? = nil) {
        self.isRefreshing = isRefreshing
        self.error = error
        self.lastRefreshed = lastRefreshed
    }

    /// "refreshing", "failed: …", "idle, refreshed …" or "idle, never refreshed".
    public var description: String {
        if isRefreshing { return "refreshing" }
        if let error { return "failed: \(error)" }
        return lastRefreshed.map { "idle, refreshed \($0)" } ?? "idle, never refreshed"
    }
}

/// A resource's rows and refresh state, as ``ResourceLoader/observe(_:)`` hands them out.
public struct ResourceSnapshot<Root: Entity>: Sendable {
    /// The rows the resource's query reads now.
    public var rows: [Root]
    /// Where its refresh stands.
    public var refresh: RefreshState
}

/// When a resource was last refreshed (`depot_sync_resources`).
@Entity("depot_sync_resources")
struct ResourceRefresh: Equatable {
    @PrimaryKey @Column("resource_key") var key: String
    @Column("refreshed_at") var refreshedAt: Date
}

/// A resource's rows and refresh state as an `@Observable` object, for views.
///
/// ```swift
/// @State var norway = LiveResource(norwayResource, loader: loader)
/// var body: some View {
///     List(norway.rows, id: \.icao) { Text($0.name) }
///         .overlay { if norway.refresh.isRefreshing { ProgressView() } }
///         .refreshable { await norway.refreshNow() }
/// }
/// ```
/// It starts observing (and, by the resource's policy, refreshing) when one of its properties is
/// first read, and stops when released or on ``stop()``.
@MainActor
@Observable
public final class LiveResource<Root: Entity> {
    /// The rows the resource's query reads now.
    public var rows: [Root] {
        runner.startIfNeeded()
        return latestRows
    }
    /// Where its refresh stands.
    public var refresh: RefreshState {
        runner.startIfNeeded()
        return latestRefresh
    }
    /// Whether the first rows have arrived.
    public var isLoaded: Bool {
        runner.startIfNeeded()
        return loaded
    }
    /// The error that ended the observation (the store's, not a failed refresh: that one is in
    /// ``refresh``).
    public var error: (any Error)? {
        runner.startIfNeeded()
        return failure
    }

    private var latestRows: [Root] = []
    private var latestRefresh = RefreshState()
    private var loaded = false
    private var failure: (any Error)?
    @ObservationIgnored private var runner: LiveRunner!
    @ObservationIgnored private let refreshAction: @Sendable () async -> Void

    /// Observes `resource` through `loader` (from the first read of a property on).
    public init<Request, Mapper>(_ resource: Resource<Request, Mapper>, loader: ResourceLoader)
    where Mapper.Target == Root {
        refreshAction = { _ = try? await loader.refresh(resource) }
        runner = LiveRunner(
            { loader.observe(resource) },
            receive: { [weak self] snapshot in
                guard let self else { return false }
                self.latestRows = snapshot.rows
                self.latestRefresh = snapshot.refresh
                self.loaded = true
                return true
            },
            fail: { [weak self] error in self?.failure = error })
    }

    /// Refreshes from the network now (pull to refresh); a failure shows in ``refresh``.
    public func refreshNow() async { await refreshAction() }

    /// Stops observing; the properties keep their last values.
    public func stop() { runner.stop() }
}
