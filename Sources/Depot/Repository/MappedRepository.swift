/// A repository that stores entities but speaks in domain models (see ``DomainMapper``).
///
/// ```swift
/// let users = store.repository(UserRecord.self).mapped(by: UserMapper())
/// let adas = try await users.fetch(where: \.name == "Ada")  // [User]
/// ```
///
/// Predicates and orderings are written over the stored entity; results are mapped after the
/// query. An error the mapper throws reaches the caller as it is (it is not wrapped in a
/// ``DepotError``); otherwise calls throw what the same ``Repository`` call throws.
public struct MappedRepository<Mapper: DomainMapper>: Sendable {
    /// The underlying repository of stored entities.
    public let base: Repository<Mapper.Stored>
    /// The mapper between entities and models.
    public let mapper: Mapper

    /// Models for the entities matching `predicate`, in order (see
    /// ``Repository/fetch(where:orderBy:limit:offset:)``).
    ///
    /// - Throws: What the repository's fetch throws, or the first error the mapper throws.
    public func fetch(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, offset: Int? = nil
    ) async throws -> [Mapper.Model] {
        try await base.fetch(where: predicate, orderBy: ordering, limit: limit, offset: offset).map(mapper.model)
    }

    /// The model of the first entity matching `predicate`.
    ///
    /// - Throws: What the repository's `first` throws, or the mapper's error.
    public func first(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = []
    ) async throws -> Mapper.Model? {
        try await base.first(where: predicate, orderBy: ordering).map(mapper.model)
    }

    /// The model stored under `key`.
    ///
    /// - Throws: What the repository's `find` throws, or the mapper's error.
    public func find<Key: StorableValue>(_ key: Key) async throws -> Mapper.Model? {
        try await base.find(key).map(mapper.model)
    }

    /// How many entities match `predicate` (all of them when `nil`); the mapper is not called.
    ///
    /// - Throws: What the repository's `count` throws.
    public func count(where predicate: Filter<Mapper.Stored>? = nil) async throws -> Int {
        try await base.count(where: predicate)
    }

    /// Stores new models; fails on an existing key.
    ///
    /// - Throws: The first error the mapper throws (nothing is written), or what the
    ///   repository's `insert` throws.
    public func insert(_ models: some Sequence<Mapper.Model>) async throws {
        try await base.insert(models.map(mapper.entity))
    }

    /// Inserts or replaces models by key.
    ///
    /// - Throws: The first error the mapper throws (nothing is written), or what the
    ///   repository's `upsert` throws.
    public func upsert(_ models: some Sequence<Mapper.Model>) async throws {
        try await base.upsert(models.map(mapper.entity))
    }

    /// Inserts or replaces one model by key.
    ///
    /// - Throws: The mapper's error (nothing is written), or what the repository's `upsert` throws.
    public func upsert(_ model: Mapper.Model) async throws {
        try await base.upsert(mapper.entity(from: model))
    }

    /// Removes the entities matching `predicate`; returns how many were removed. Delete rules
    /// apply as for ``Repository/remove(where:)``.
    ///
    /// - Throws: What the repository's `remove(where:)` throws (`.constraintViolation` when a
    ///   `.deny` rule refuses).
    @discardableResult
    public func remove(where predicate: Filter<Mapper.Stored>) async throws -> Int {
        try await base.remove(where: predicate)
    }

    /// Replaces the entities matching `predicate` with `models`, in one transaction (see
    /// ``Repository/replace(where:with:)``).
    ///
    /// - Throws: The first error the mapper throws (nothing is written), or what the
    ///   repository's `replace` throws.
    public func replace(where predicate: Filter<Mapper.Stored>, with models: some Sequence<Mapper.Model>)
        async throws
    {
        try await base.replace(where: predicate, with: models.map(mapper.entity))
    }
}
