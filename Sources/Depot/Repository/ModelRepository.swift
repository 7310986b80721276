/// The reads and writes of a repository of domain models, as a protocol an app can fake in its
/// tests. ``MappedRepository`` conforms; a screen or a view model that depends on
/// `any ModelRepository<User, UserEntity>` runs unchanged against a fake.
///
/// ```swift
/// final class UserDirectory {
///     let users: any ModelRepository<User, UserEntity>
///     init(users: any ModelRepository<User, UserEntity>) { self.users = users }
///     func bots() async throws -> [User] { try await users.fetch(Query(where: \.kind == "bot")) }
/// }
/// let live = UserDirectory(users: store.repository(UserEntity.self).mapped(by: UserMapper()))
///
/// struct FailingUsers: ModelRepository {  // in a test: every read fails as a lost network would
///     func fetch(_ query: Query<UserEntity>) async throws -> [User] { throw Offline() }
///     …
/// }
/// ```
///
/// A fake implements the requirements without a default: ``fetch(_:)``, ``find(_:)``,
/// ``count(_:)``, both `persist` methods, both `remove` methods (by query, by key) and
/// ``observe(_:timing:)`` (return a ``ModelObservation`` of any sequence of results, for example
/// an `AsyncThrowingStream` the test drives). `first`, `exists` and `removeAll` have defaults
/// built on those; the calls with `where:` and `orderBy:` build a ``Query`` and call them.
/// Aggregates, projections, sections and diffs are not part of it: they live on the concrete
/// repositories.
public protocol ModelRepository<Model, Stored>: Sendable {
    /// What the app uses.
    associatedtype Model: Sendable
    /// What is stored; queries are written over it.
    associatedtype Stored: Entity

    /// The models of the rows `query` returns, in its order.
    func fetch(_ query: Query<Stored>) async throws -> [Model]
    /// The model of the first row of `query`, if any.
    func first(_ query: Query<Stored>) async throws -> Model?
    /// The model stored under `key`, if any.
    func find<Key: StorableValue>(_ key: Key) async throws -> Model?
    /// How many rows `query` returns (its page included).
    func count(_ query: Query<Stored>) async throws -> Int
    /// Whether `query` returns a row.
    func exists(_ query: Query<Stored>) async throws -> Bool
    /// Stores `sources` through an update mapper and returns their models as stored, in order.
    @discardableResult
    func persist<Persist: UpdateMapper>(_ sources: some Sequence<Persist.Source>, mapper: Persist) async throws
        -> [Model] where Persist.Target == Stored
    /// Upserts what a persist mapper makes of `sources` and returns their models as stored, in order.
    @discardableResult
    func persist<Persist: PersistMapper>(_ sources: some Sequence<Persist.Source>, mapper: Persist) async throws
        -> [Model] where Persist.Target == Stored
    /// Removes the rows `query` returns; returns how many.
    @discardableResult
    func remove(_ query: Query<Stored>) async throws -> Int
    /// Removes the row stored under `key`; returns whether there was one.
    @discardableResult
    func remove<Key: StorableValue>(_ key: Key) async throws -> Bool
    /// Removes every row; returns how many.
    @discardableResult
    func removeAll() async throws -> Int
    /// The models of `query` now, then again after every commit that changed them.
    func observe(_ query: Query<Stored>, timing: ObservationTiming) -> ModelObservation<Model>
}

extension ModelRepository {
    /// The first model of `query`: ``fetch(_:)`` of a one-row page.
    public func first(_ query: Query<Stored>) async throws -> Model? {
        var page = query
        page.limit = query.limit.map { min($0, 1) } ?? 1
        return try await fetch(page).first
    }

    /// Whether ``count(_:)`` of a one-row page is more than zero.
    public func exists(_ query: Query<Stored>) async throws -> Bool {
        var page = query
        page.limit = query.limit.map { min($0, 1) } ?? 1
        return try await count(page) > 0
    }

    /// Removes every row through `remove` of an empty query.
    @discardableResult
    public func removeAll() async throws -> Int {
        try await remove(Query())
    }

    /// The models matching `predicate`, in order (see ``fetch(_:)``).
    public func fetch(
        where predicate: Filter<Stored>? = nil, orderBy ordering: [Ordering<Stored>] = [], limit: Int? = nil,
        offset: Int? = nil
    ) async throws -> [Model] {
        try await fetch(Query(where: predicate, orderBy: ordering, limit: limit, offset: offset))
    }

    /// The first model matching `predicate` (see ``first(_:)``).
    public func first(where predicate: Filter<Stored>? = nil, orderBy ordering: [Ordering<Stored>] = [])
        async throws -> Model?
    {
        try await first(Query(where: predicate, orderBy: ordering))
    }

    /// How many rows match `predicate` (see ``count(_:)``).
    public func count(where predicate: Filter<Stored>? = nil) async throws -> Int {
        try await count(Query(where: predicate))
    }

    /// Whether a row matches `predicate` (see ``exists(_:)``).
    public func exists(where predicate: Filter<Stored>? = nil) async throws -> Bool {
        try await exists(Query(where: predicate))
    }

    /// Removes the rows matching `predicate`; returns how many.
    @discardableResult
    public func remove(where predicate: Filter<Stored>) async throws -> Int {
        try await remove(Query(where: predicate))
    }

    /// The live models of `query`, each commit's result emitted at once (see ``observe(_:timing:)``).
    public func observe(_ query: Query<Stored>) -> ModelObservation<Model> {
        observe(query, timing: .immediate)
    }

    /// The live models matching `predicate` (see ``observe(_:timing:)``).
    public func observe(
        where predicate: Filter<Stored>? = nil, orderBy ordering: [Ordering<Stored>] = [], limit: Int? = nil,
        timing: ObservationTiming = .immediate
    ) -> ModelObservation<Model> {
        observe(Query(where: predicate, orderBy: ordering, limit: limit), timing: timing)
    }
}

extension MappedRepository: ModelRepository {
    /// The mapper's domain model.
    public typealias Model = Mapper.Model
    /// The mapper's stored entity.
    public typealias Stored = Mapper.Stored
}

/// The live results of a query as models: what ``ModelRepository/observe(_:timing:)`` returns.
///
/// A fake repository wraps any sequence of results, for example a stream its test drives:
///
/// ```swift
/// let (results, continuation) = AsyncThrowingStream.makeStream(of: [User].self)
/// let observation = ModelObservation(results)
/// continuation.yield([ada])  // the screen shows Ada
/// continuation.finish(throwing: Offline())  // then the error
/// ```
public struct ModelObservation<Model: Sendable>: AsyncSequence, Sendable {
    /// One complete result.
    public typealias Element = [Model]
    private let start: @Sendable () -> Iterator

    /// An observation emitting what `results` emits, ending and failing when it does.
    public init<Results: AsyncSequence & Sendable>(_ results: Results) where Results.Element == [Model] {
        start = { Iterator(Box(results.makeAsyncIterator())) }
    }

    /// A new observation of the results.
    public func makeAsyncIterator() -> Iterator { start() }

    /// One observation.
    public struct Iterator: AsyncIteratorProtocol {
        private let box: IteratorBox<Model>
        fileprivate init(_ box: IteratorBox<Model>) { self.box = box }

        /// The next result; `nil` when the observation ends.
        ///
        /// - Throws: What the observed sequence throws.
        public mutating func next() async throws -> [Model]? { try await box.next() }
    }
}

/// An iterator of results behind a type that hides its own.
private class IteratorBox<Model: Sendable> {
    func next() async throws -> [Model]? { nil }
}

/// `Base` as an ``IteratorBox``.
private final class Box<Base: AsyncIteratorProtocol, Model: Sendable>: IteratorBox<Model>
where Base.Element == [Model] {
    private var base: Base
    init(_ base: Base) { self.base = base }
    override func next() async throws -> [Model]? { try await base.next() }
}
