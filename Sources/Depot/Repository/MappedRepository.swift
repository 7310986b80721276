/// A repository that stores entities but speaks in domain models (see ``DomainMapper``).
///
/// ```swift
/// let users = store.repository(UserEntity.self).mapped(by: UserMapper())
/// let adas = try await users.fetch(where: \.name == "Ada")                 // [User]
/// let stored = try await users.persist(responses, mapper: UserResponseMapper())  // [User]
/// ```
///
/// Predicates, orderings and queries are written over the stored entity; results are mapped
/// after the query, each entity read with the mapper's ``DomainMapper/includes``. An error the
/// mapper throws reaches the caller as a ``DepotError`` of kind `.mappingFailed` wrapping it (a
/// ``DepotError`` it throws passes through); otherwise calls throw what the same ``Repository``
/// call throws. Aggregates, projections and set-based updates return values, not models: call
/// them on ``base``.
public struct MappedRepository<Mapper: DomainMapper>: Sendable {
    /// The underlying repository of stored entities.
    public let base: Repository<Mapper.Stored>
    /// The mapper between entities and models.
    public let mapper: Mapper

    /// The models of `entities`, read with the mapper's includes.
    private func models(_ entities: [Mapper.Stored]) async throws -> [Mapper.Model] {
        try await mapper.models(of: entities, from: base.context.reader)
    }

    /// Models for the entities matching `predicate`, in order (see
    /// ``Repository/fetch(where:orderBy:limit:offset:)``).
    ///
    /// - Throws: What the repository's fetch throws, or the mapper's error.
    public func fetch(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, offset: Int? = nil
    ) async throws -> [Mapper.Model] {
        try await fetch(Query(where: predicate, orderBy: ordering, limit: limit, offset: offset))
    }

    /// Models for the rows `query` returns.
    ///
    /// - Throws: What the repository's fetch throws, or the mapper's error.
    public func fetch(_ query: Query<Mapper.Stored>) async throws -> [Mapper.Model] {
        try await models(base.fetch(query))
    }

    /// The model of the first entity matching `predicate`.
    ///
    /// - Throws: What the repository's `first` throws, or the mapper's error.
    public func first(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = []
    ) async throws -> Mapper.Model? {
        try await first(Query(where: predicate, orderBy: ordering))
    }

    /// The model of the first row of `query`.
    ///
    /// - Throws: What the repository's `first` throws, or the mapper's error.
    public func first(_ query: Query<Mapper.Stored>) async throws -> Mapper.Model? {
        guard let entity = try await base.first(query) else { return nil }
        return try await models([entity]).first
    }

    /// The model stored under `key`.
    ///
    /// - Throws: What the repository's `find` throws, or the mapper's error.
    public func find<Key: StorableValue>(_ key: Key) async throws -> Mapper.Model? {
        guard let entity = try await base.find(key) else { return nil }
        return try await models([entity]).first
    }

    /// How many entities match `predicate` (all of them when `nil`); the mapper is not called.
    ///
    /// - Throws: What the repository's `count` throws.
    public func count(where predicate: Filter<Mapper.Stored>? = nil) async throws -> Int {
        try await base.count(where: predicate)
    }

    /// How many rows `query` returns; the mapper is not called.
    ///
    /// - Throws: What the repository's `count` throws.
    public func count(_ query: Query<Mapper.Stored>) async throws -> Int {
        try await base.count(query)
    }

    /// Whether an entity matches `predicate`.
    ///
    /// - Throws: What the repository's `exists` throws.
    public func exists(where predicate: Filter<Mapper.Stored>? = nil) async throws -> Bool {
        try await base.exists(where: predicate)
    }

    /// Whether `query` returns a row.
    ///
    /// - Throws: What the repository's `exists` throws.
    public func exists(_ query: Query<Mapper.Stored>) async throws -> Bool {
        try await base.exists(query)
    }

    /// `query`'s models grouped by `key` of their entities, in the order of the keys.
    ///
    /// - Throws: What the repository's `sections` throws, or the mapper's error.
    public func sections<Key: StorableValue & Hashable>(
        by key: KeyPath<Mapper.Stored, Key>, _ query: Query<Mapper.Stored> = Query()
    ) async throws -> [Section<Key, Mapper.Model>] {
        let sections = try await base.sections(by: key, query)
        var models = try await models(sections.flatMap(\.items))[...]
        return sections.map { section in
            defer { models = models.dropFirst(section.items.count) }
            return Section(key: section.key, items: Array(models.prefix(section.items.count)))
        }
    }

    /// Stores `sources` through `persist` (the repository's `persist` with an ``UpdateMapper``)
    /// and returns their models as stored, in the order of `sources`, read with the mapper's
    /// includes in the same transaction.
    ///
    /// ```swift
    /// let users: [User] = try await repository.persist(responses, mapper: UserResponseMapper())
    /// ```
    ///
    /// - Throws: What the repository's `persist` throws, or the domain mapper's error (then
    ///   nothing is written).
    @discardableResult
    public func persist<Persist: UpdateMapper>(
        _ sources: some Sequence<Persist.Source>, mapper persist: Persist
    ) async throws -> [Mapper.Model] where Persist.Target == Mapper.Stored {
        let list = Array(sources)
        let mapper = mapper
        return try await base.context.atomically { writer in
            let stored = try await Repository<Mapper.Stored>(context: .transaction(writer)).persist(
                list, mapper: persist)
            return try await mapper.models(of: stored, from: writer)
        }
    }

    /// Upserts what `persist` makes of `sources` (the repository's `persist` with a ``PersistMapper``)
    /// and returns their models as stored, in the order of `sources`.
    ///
    /// - Throws: What the repository's `persist` throws, or the domain mapper's error (then
    ///   nothing is written).
    @discardableResult
    public func persist<Persist: PersistMapper>(
        _ sources: some Sequence<Persist.Source>, mapper persist: Persist
    ) async throws -> [Mapper.Model] where Persist.Target == Mapper.Stored {
        let entities = try Repository<Mapper.Stored>.mapping(sources, with: Persist.self) {
            try persist.entity(from: $0)
        }
        let mapper = mapper
        return try await base.context.atomically { writer in
            let stored = try await Repository<Mapper.Stored>(context: .transaction(writer)).persist(
                entities, mapper: Identity())
            return try await mapper.models(of: stored, from: writer)
        }
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

    /// Removes the rows `query` returns; returns how many.
    ///
    /// - Throws: What the repository's `remove` throws.
    @discardableResult
    public func remove(_ query: Query<Mapper.Stored>) async throws -> Int {
        try await base.remove(query)
    }

    /// Removes the entity stored under `key`; returns whether there was one.
    ///
    /// - Throws: What the repository's `remove(_:)` throws.
    @discardableResult
    public func remove<Key: StorableValue>(_ key: Key) async throws -> Bool {
        try await base.remove(key)
    }

    /// Removes every entity; returns how many.
    ///
    /// - Throws: What the repository's `removeAll()` throws.
    @discardableResult
    public func removeAll() async throws -> Int {
        try await base.removeAll()
    }
}

extension MappedRepository where Mapper: WritableDomainMapper {
    /// Stores new models; fails on an existing key. Only each model's entity is written.
    ///
    /// - Throws: The first error the mapper throws (nothing is written), or what the
    ///   repository's `insert` throws.
    public func insert(_ models: some Sequence<Mapper.Model>) async throws {
        try await base.insert(entities(models))
    }

    /// Inserts or replaces models by key. Only each model's entity is written; rows that hold
    /// the same values already are left alone.
    ///
    /// - Returns: How many rows were inserted or changed.
    /// - Throws: The first error the mapper throws (nothing is written), or what the
    ///   repository's `upsert` throws.
    @discardableResult
    public func upsert(_ models: some Sequence<Mapper.Model>) async throws -> Int {
        try await base.upsert(entities(models))
    }

    /// Inserts or replaces one model by key.
    ///
    /// - Returns: Whether the row was inserted or changed.
    /// - Throws: The mapper's error (nothing is written), or what the repository's `upsert` throws.
    @discardableResult
    public func upsert(_ model: Mapper.Model) async throws -> Bool {
        try await base.upsert(entities(CollectionOfOne(model))) > 0
    }

    /// Replaces the entities matching `predicate` with `models`, in one transaction (see
    /// ``Repository/replace(where:with:)``).
    ///
    /// - Throws: The first error the mapper throws (nothing is written), or what the
    ///   repository's `replace` throws.
    public func replace(where predicate: Filter<Mapper.Stored>, with models: some Sequence<Mapper.Model>)
        async throws
    {
        try await base.replace(where: predicate, with: entities(models))
    }

    /// The entities of `models`, naming the mapper in an error it throws.
    private func entities(_ models: some Sequence<Mapper.Model>) throws -> [Mapper.Stored] {
        try Repository<Mapper.Stored>.mapping(models, with: Mapper.self, mapper.entity(from:))
    }
}

/// Stores entities as they are: a persist of entities that returns them as stored.
private struct Identity<Target: Entity>: PersistMapper {
    func entity(from source: Target) -> Target { source }
}
