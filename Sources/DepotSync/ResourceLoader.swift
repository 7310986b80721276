import Depot
import DepotHTTP
import Foundation
import Synchronization

/// Loads and observes ``Resource``s: the local rows at once, refreshed from the network by each
/// resource's policy, every response persisted through its mapper in one transaction.
///
/// ```swift
/// let loader = ResourceLoader(store: store, client: client)
/// let stored = try await loader.refresh(norway)            // [Airport]: what the response stored
/// let rows = try await loader.refresh(search, latestOnly: "search")   // cancels the previous search
/// ```
///
/// Refreshes of the same resource key in flight are shared: a second caller waits for the first
/// one's request instead of sending its own. With `latestOnly:`, a refresh cancels the one it
/// replaces in that group (type-ahead search); the cancelled one stores nothing and throws
/// `CancellationError`.
public final class ResourceLoader: Sendable {
    /// The store responses are persisted in.
    public let store: any Store
    /// The API's client.
    public let client: APIClient
    /// The sync engine whose waiting edits stay on top of what a refresh stores (``init(engine:clock:)``).
    let engine: SyncEngine?
    let clock: @Sendable () -> Date
    private let state = Mutex(LoaderState())

    private struct InFlight {
        var id: UUID
        var task: Task<[[StoredValue]], any Error>
    }

    private struct LoaderState {
        var inFlight: [String: InFlight] = [:]
        var latest: [String: (key: String, id: UUID)] = [:]
        /// Each resource's refresh states, the latest kept.
        var refreshes: [String: Broadcaster<RefreshState>] = [:]
    }

    /// A loader persisting into `store` what `client` fetches. For entities a ``SyncEngine`` syncs,
    /// use ``init(engine:clock:)``.
    public init(store: any Store, client: APIClient, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.client = client
        self.engine = nil
        self.clock = clock
    }

    /// A loader working with `engine`: it fetches through the engine's client and stores into the
    /// store under it, as a pulled page is stored — what the server sent is not recorded as a local
    /// edit, and edits of synced entities waiting to be pushed stay on top of it.
    ///
    /// - Throws: `DepotError` of kind `.connection` when the engine has no client.
    public init(engine: SyncEngine, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        guard let client = engine.client else {
            throw DepotError(.connection, "a resource loader needs an API client: this sync engine has none")
        }
        self.store = engine.base
        self.client = client
        self.engine = engine
        self.clock = clock
    }

    /// Fetches `resource` now and persists the response through its mapper in one transaction;
    /// returns the rows it stored (read back after the write, in the response's order).
    ///
    /// - Parameters:
    ///   - resource: What to fetch and where it is stored.
    ///   - group: A group name (`latestOnly:`): a refresh in flight in the same group for another
    ///     key is cancelled.
    /// - Throws: The client's `HTTPError`, the mapper's or the store's `DepotError` (nothing is
    ///   stored then); `CancellationError` when a later `latestOnly` refresh replaced it.
    @discardableResult
    public func refresh<Request, Mapper>(_ resource: Resource<Request, Mapper>, latestOnly group: String? = nil)
        async throws -> [Mapper.Target]
    {
        let keys = try await sharedRefresh(resource, group: group)
        let stored = try await RowReads.rows(of: Mapper.Target.schema.table, keys: keys, in: store)
        let schema = Mapper.Target.schema
        return try keys.compactMap { key in try stored[SyncJSON.keyText(key)].map { try schema.decode($0) } }
    }

    /// ``refresh(_:latestOnly:)``, the stored rows handed out as domain models through `domain`.
    ///
    /// ```swift
    /// let places: [Place] = try await loader.refresh(norway, mappedBy: PlaceMapper())
    /// ```
    ///
    /// - Throws: What ``refresh(_:latestOnly:)`` throws; `DepotError` of kind `.mappingFailed`
    ///   wrapping an error `domain` throws.
    public func refresh<Request, Mapper, Domain: DomainMapper>(
        _ resource: Resource<Request, Mapper>, latestOnly group: String? = nil, mappedBy domain: Domain
    ) async throws -> [Domain.Model] where Domain.Stored == Mapper.Target {
        try await domain.models(of: refresh(resource, latestOnly: group), from: store)
    }

    /// The resource's rows, offline first: what is stored when the resource's policy finds it good
    /// enough, otherwise what a refresh stores; the stored rows when that refresh fails but some
    /// are stored.
    ///
    /// ```swift
    /// let airport: Airport? = try await loader.load(engm).first
    /// ```
    ///
    /// By policy: `.localOnly` reads the store; `.cacheFirst` refreshes first when the resource
    /// was never refreshed; `.networkFirst` refreshes first; `.staleWhileRevalidate` refreshes
    /// first when nothing is stored, and otherwise returns the stored rows at once, refreshing in
    /// the background when the last refresh is older than its `maxAge`.
    ///
    /// - Throws: The refresh's error (`HTTPError`, the mapper's or the store's `DepotError`) when
    ///   it failed and no row is stored; the store's error reading the rows.
    public func load<Request, Mapper>(_ resource: Resource<Request, Mapper>) async throws -> [Mapper.Target] {
        let repository = store.repository(Mapper.Target.self)
        func stored() async throws -> [Mapper.Target] {
            try await repository.fetch(where: resource.predicate, orderBy: resource.ordering, limit: resource.limit)
        }
        let refreshFirst: Bool
        switch resource.policy {
        case .localOnly: return try await stored()
        case .cacheFirst: refreshFirst = try await refreshState(resource).lastRefreshed == nil
        case .networkFirst: refreshFirst = true
        case .staleWhileRevalidate:
            let rows = try await stored()
            if rows.isEmpty { refreshFirst = true; break }
            if try await isStale(resource) { Task { _ = try? await self.refresh(resource) } }
            return rows
        }
        guard refreshFirst else { return try await stored() }
        do {
            try await refresh(resource)
        } catch {
            // Offline first: what is stored stands in for an answer that did not come.
            let rows = try await stored()
            if rows.isEmpty { throw error }
            return rows
        }
        return try await stored()
    }

    /// ``load(_:)``, the rows handed out as domain models through `domain`.
    ///
    /// ```swift
    /// let user: User? = try await loader.load(obtainUser(id: "u1"), mappedBy: UserMapper()).first
    /// ```
    ///
    /// - Throws: What ``load(_:)`` throws; `DepotError` of kind `.mappingFailed` wrapping an error
    ///   `domain` throws.
    public func load<Request, Mapper, Domain: DomainMapper>(
        _ resource: Resource<Request, Mapper>, mappedBy domain: Domain
    ) async throws -> [Domain.Model] where Domain.Stored == Mapper.Target {
        try await domain.models(of: load(resource), from: store)
    }

    /// Whether `resource`'s last refresh is older than its `staleWhileRevalidate` age, or there was none.
    private func isStale<Request, Mapper>(_ resource: Resource<Request, Mapper>) async throws -> Bool {
        guard case .staleWhileRevalidate(let maxAge) = resource.policy else { return false }
        let seconds = Double(maxAge.components.seconds) + Double(maxAge.components.attoseconds) / 1e18
        return try await refreshState(resource).lastRefreshed.map { clock().timeIntervalSince($0) > seconds } ?? true
    }

    /// The refresh state of `resource` now (its last refresh read from the store).
    public func refreshState<Request, Mapper>(_ resource: Resource<Request, Mapper>) async throws -> RefreshState {
        var current = refreshes(of: resource.key).latest ?? RefreshState()
        if current.lastRefreshed == nil {
            current.lastRefreshed = try await store.repository(ResourceRefresh.self).find(resource.key)?.refreshedAt
        }
        return current
    }

    /// The refresh state of `resource` now, then each time it changes.
    public func refreshStates<Request, Mapper>(_ resource: Resource<Request, Mapper>) -> AsyncStream<RefreshState> {
        refreshes(of: resource.key).subscribe()
    }

    private func refreshes(of key: String) -> Broadcaster<RefreshState> {
        state.withLock { state in
            if let existing = state.refreshes[key] { return existing }
            let created = Broadcaster<RefreshState>(buffering: 8, replaysLatest: true)
            state.refreshes[key] = created
            return created
        }
    }

    /// The resource's rows now (local), then again whenever they or its refresh state change; by
    /// the resource's policy, a refresh runs when observation starts.
    ///
    /// ```swift
    /// for try await snapshot in loader.observe(norway) {
    ///     list.rows = snapshot.rows
    ///     list.isRefreshing = snapshot.refresh.isRefreshing
    /// }
    /// ```
    public func observe<Request, Mapper>(_ resource: Resource<Request, Mapper>)
        -> AsyncThrowingStream<ResourceSnapshot<Mapper.Target>, any Error>
    {
        AsyncThrowingStream { output in
            let task = Task {
                do {
                    try await self.run(resource, into: output)
                    output.finish()
                } catch {
                    output.finish(throwing: error)
                }
            }
            output.onTermination = { _ in task.cancel() }
        }
    }

    private func run<Request, Mapper>(
        _ resource: Resource<Request, Mapper>,
        into output: AsyncThrowingStream<ResourceSnapshot<Mapper.Target>, any Error>.Continuation
    ) async throws {
        let repository = store.repository(Mapper.Target.self)
        let states = refreshStates(resource)
        var refresh = try await refreshState(resource)
        let needed: Bool
        switch resource.policy {
        case .localOnly: needed = false
        case .cacheFirst: needed = refresh.lastRefreshed == nil
        case .networkFirst: needed = true
        case .staleWhileRevalidate: needed = try await isStale(resource)
        }
        if needed, resource.policy == .networkFirst {
            _ = try? await self.refresh(resource)
            refresh = try await refreshState(resource)
        } else if needed {
            Task { _ = try? await self.refresh(resource) }
        }
        let rows = repository.observe(where: resource.predicate, orderBy: resource.ordering, limit: resource.limit)
        try await withThrowingTaskGroup(of: Void.self) { group in
            let latest = LatestSnapshot<Mapper.Target>(refresh: refresh)
            group.addTask {
                for try await list in rows { output.yield(latest.rows(list)) }
            }
            group.addTask {
                for await next in states {
                    if let snapshot = latest.refresh(next) { output.yield(snapshot) }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    // MARK: - Refreshing

    private func sharedRefresh<Request, Mapper>(_ resource: Resource<Request, Mapper>, group: String?) async throws
        -> [[StoredValue]]
    {
        let key = resource.key
        let task = state.withLock { state -> Task<[[StoredValue]], any Error> in
            // A refresh of the same key in flight is joined, unless a later one cancelled it.
            if let running = state.inFlight[key], !running.task.isCancelled { return running.task }
            let id = UUID()
            let task = Task { try await self.fetchAndStore(resource, id: id) }
            state.inFlight[key] = InFlight(id: id, task: task)
            if let group {
                if let previous = state.latest[group], previous.key != key,
                    let replaced = state.inFlight[previous.key], replaced.id == previous.id
                {
                    replaced.task.cancel()
                }
                state.latest[group] = (key, id)
            }
            return task
        }
        // A caller that stops waiting does not cancel what others wait for too.
        return try await task.value
    }

    private func fetchAndStore<Request, Mapper>(_ resource: Resource<Request, Mapper>, id: UUID) async throws
        -> [[StoredValue]]
    {
        let key = resource.key
        let previous = try? await refreshState(resource)
        publish(key, RefreshState(isRefreshing: true, error: nil, lastRefreshed: previous?.lastRefreshed))
        do {
            let table = Mapper.Target.schema.tableName
            var attempt = 1
            while true {
                // A pull that began after the request went out may have stored newer rows than the
                // response holds: then the response is not stored over them, and is asked again.
                let pullsBefore = engine?.pullsBegun(into: table)
                let response = try await client.send(resource.request)
                try Task.checkCancellation()
                let patches = try resource.elements(response).map { source in
                    do {
                        return try resource.mapper.patch(from: source)
                    } catch let error as DepotError {
                        throw error
                    } catch {
                        throw DepotError(
                            .mappingFailed, "\(Mapper.self) could not map a response of \(key): \(error)",
                            table: Mapper.Target.schema.tableName, underlying: error)
                    }
                }
                let now = clock()
                let engine = engine
                let lastAttempt = attempt == Self.attemptsAgainstPulls
                do {
                    try await store.transaction { writer in
                        let tx = Transaction(writer: writer)
                        if try await engine?.storeServerRows(patches, in: writer) != true {
                            try await tx.repository(Mapper.Target.self).apply(patches)
                        }
                        if let engine, let pullsBefore, engine.pullsBegun(into: table) != pullsBefore {
                            // Rolled back; the last attempt keeps what the pulls stored instead.
                            throw OverlappedPull()
                        }
                        try await tx.repository(ResourceRefresh.self).upsert(
                            ResourceRefresh(key: key, refreshedAt: now))
                    }
                } catch is OverlappedPull where !lastAttempt {
                    attempt += 1
                    continue
                } catch is OverlappedPull {
                    // Pulls kept overlapping: the rows stored are at least as new as this response.
                    try await store.repository(ResourceRefresh.self).upsert(ResourceRefresh(key: key, refreshedAt: now))
                }
                finish(key, id: id, RefreshState(lastRefreshed: now))
                return patches.map(\.key)
            }
        } catch {
            // A refresh a later one replaced is not a failure to show.
            let cancelled = error is CancellationError || (error as? HTTPError)?.kind == .cancelled
            finish(key, id: id, RefreshState(error: cancelled ? nil : error, lastRefreshed: previous?.lastRefreshed))
            throw error
        }
    }

    /// How many times a refresh asks again when a sync engine's pull overlapped its request.
    static let attemptsAgainstPulls = 3

    /// A pull began between a refresh's request and its commit.
    private struct OverlappedPull: Error {}

    private func finish(_ key: String, id: UUID, _ refresh: RefreshState) {
        state.withLock { state in
            if state.inFlight[key]?.id == id { state.inFlight.removeValue(forKey: key) }
            for (group, latest) in state.latest where latest.id == id { state.latest.removeValue(forKey: group) }
        }
        publish(key, refresh)
    }

    private func publish(_ key: String, _ refresh: RefreshState) {
        refreshes(of: key).publish(refresh)
    }
}

/// The rows and refresh state last handed out by an observation, updated from both sides.
private final class LatestSnapshot<Root: Entity>: Sendable {
    private let state: Mutex<(rows: [Root]?, refresh: RefreshState)>

    init(refresh: RefreshState) { state = Mutex((nil, refresh)) }

    func rows(_ rows: [Root]) -> ResourceSnapshot<Root> {
        state.withLock { current in
            current.rows = rows
            return ResourceSnapshot(rows: rows, refresh: current.refresh)
        }
    }

    func refresh(_ refresh: RefreshState) -> ResourceSnapshot<Root>? {
        state.withLock { current in
            current.refresh = refresh
            return current.rows.map { ResourceSnapshot(rows: $0, refresh: refresh) }
        }
    }
}
