/// Converts between a stored entity and the domain model the rest of the app uses.
///
/// ```swift
/// struct UserMapper: DomainMapper {
///     func model(from record: UserRecord) throws -> User { User(id: record.id, name: record.name) }
///     func entity(from user: User) throws -> UserRecord { UserRecord(id: user.id, name: user.name) }
/// }
/// let users = store.repository(UserRecord.self).mapped(by: UserMapper())  // hands out User
/// ```
public protocol DomainMapper<Stored, Model>: Sendable {
    associatedtype Stored: Entity
    associatedtype Model: Sendable
    /// The domain model for a stored entity.
    func model(from entity: Stored) throws -> Model
    /// The entity that stores a domain model.
    func entity(from model: Model) throws -> Stored
}

/// Turns a source model (an API response, a domain model) into the entity it updates, matched to
/// stored rows by primary key. Several mappers may target one entity.
///
/// ```swift
/// struct AirportDTOMapper: PersistMapper {
///     func entity(from dto: AirportDTO) throws -> Airport { Airport(icao: dto.code, …) }
/// }
/// try await airports.persist(dtos, mapper: AirportDTOMapper())
/// ```
public protocol PersistMapper<Source, Target>: Sendable {
    associatedtype Source
    associatedtype Target: Entity
    /// The entity a source value stores.
    func entity(from source: Source) throws -> Target
}

/// A persist mapper that merges a source into the stored entity with the same key, or builds a
/// new one when none is stored (the imperative mapper of the seed repositories).
///
/// Existing rows of a batch are prefetched in one query, not one per row.
public protocol UpdateMapper<Source, Target>: Sendable {
    associatedtype Source
    associatedtype Target: Entity
    associatedtype Key: StorableValue
    /// The primary key of the row `source` updates.
    func key(of source: Source) -> Key
    /// A new entity for a source whose key is not stored yet.
    func makeEntity(from source: Source) throws -> Target
    /// Applies `source` to the stored entity.
    func update(_ entity: inout Target, from source: Source) throws
}

extension Repository {
    /// Upserts the entities `mapper` makes from `sources` (matched by primary key, last one wins).
    public func persist<Mapper: PersistMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws where Mapper.Target == Root {
        let entities = try Self.mapping(sources, with: Mapper.self) { try mapper.entity(from: $0) }
        try await upsert(entities)
    }

    /// Merges `sources` into the stored entities with the same key through `mapper`, creating
    /// the missing ones; the existing rows are read in one query inside the same transaction.
    public func persist<Mapper: UpdateMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws where Mapper.Target == Root, Mapper.Source: Sendable {
        let list = Array(sources)
        guard !list.isEmpty else { return }
        let schema = try checkedSchema()
        guard schema.primaryKeyIndices.count == 1 else {
            throw DepotError(
                .invalidQuery, "UpdateMapper needs a single-column primary key; \(Root.self) has a composite one",
                table: schema.tableName)
        }
        let keyColumn = schema.columns[schema.primaryKeyIndices[0]].name
        let keys = list.map { mapper.key(of: $0).storedValue }
        try await context.atomically { writer in
            let inner = Repository(context: .transaction(writer))
            let query = SelectQuery(table: schema.table, predicate: .isIn(column: keyColumn, keys))
            let stored = try await writer.scan(query) { cursor in try schema.decodeAll(&cursor) }
            var byKey: [StoredValue: Root] = [:]
            for entity in stored { byKey[schema.key(of: entity)[0]] = entity }
            var order: [StoredValue] = []
            for (source, key) in zip(list, keys) {
                do {
                    if var entity = byKey[key] {
                        try mapper.update(&entity, from: source)
                        byKey[key] = entity
                    } else {
                        byKey[key] = try mapper.makeEntity(from: source)
                    }
                } catch let error as DepotError {
                    throw error
                } catch {
                    throw DepotError(
                        .mappingFailed, "\(Mapper.self) failed for key \(TableDescription.describeKey([key]))",
                        table: schema.tableName, underlying: error)
                }
                order.append(key)
            }
            var seen: Set<StoredValue> = []
            let entities = order.compactMap { key in seen.insert(key).inserted ? byKey[key] : nil }
            try await inner.upsert(entities)
        }
    }

    /// Maps every source, wrapping a mapper's own errors in a `.mappingFailed` error that names it.
    static func mapping<Source, Output>(
        _ sources: some Sequence<Source>, with mapper: Any.Type, _ transform: (Source) throws -> Output
    ) throws -> [Output] {
        try sources.map { source in
            do {
                return try transform(source)
            } catch let error as DepotError {
                throw error
            } catch {
                throw DepotError(
                    .mappingFailed, "\(mapper) could not map a \(Source.self) for \(Root.self)",
                    table: Root.schema.tableName, underlying: error)
            }
        }
    }

    /// A repository that hands out and accepts domain models through `mapper`.
    public func mapped<Mapper: DomainMapper>(by mapper: Mapper) -> MappedRepository<Mapper>
    where Mapper.Stored == Root {
        MappedRepository(base: self, mapper: mapper)
    }
}

/// A repository that stores entities but speaks in domain models (see ``DomainMapper``).
public struct MappedRepository<Mapper: DomainMapper>: Sendable {
    /// The underlying repository of stored entities.
    public let base: Repository<Mapper.Stored>
    /// The mapper between entities and models.
    public let mapper: Mapper

    /// Models for the entities matching `predicate`, in order.
    public func fetch(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = [],
        limit: Int? = nil, offset: Int? = nil
    ) async throws -> [Mapper.Model] {
        try await base.fetch(where: predicate, orderBy: ordering, limit: limit, offset: offset).map(mapper.model)
    }

    /// The model of the first entity matching `predicate`.
    public func first(
        where predicate: Filter<Mapper.Stored>? = nil, orderBy ordering: [Ordering<Mapper.Stored>] = []
    ) async throws -> Mapper.Model? {
        try await base.first(where: predicate, orderBy: ordering).map(mapper.model)
    }

    /// The model stored under `key`.
    public func find<Key: StorableValue>(_ key: Key) async throws -> Mapper.Model? {
        try await base.find(key).map(mapper.model)
    }

    /// How many entities match.
    public func count(where predicate: Filter<Mapper.Stored>? = nil) async throws -> Int {
        try await base.count(where: predicate)
    }

    /// Stores new models; fails on an existing key.
    public func insert(_ models: some Sequence<Mapper.Model>) async throws {
        try await base.insert(models.map(mapper.entity))
    }

    /// Inserts or replaces models by key.
    public func upsert(_ models: some Sequence<Mapper.Model>) async throws {
        try await base.upsert(models.map(mapper.entity))
    }

    /// Inserts or replaces one model by key.
    public func upsert(_ model: Mapper.Model) async throws {
        try await base.upsert(mapper.entity(from: model))
    }

    /// Removes the entities matching `predicate`.
    @discardableResult
    public func remove(where predicate: Filter<Mapper.Stored>) async throws -> Int {
        try await base.remove(where: predicate)
    }

    /// Replaces the entities matching `predicate` with `models`, in one transaction.
    public func replace(where predicate: Filter<Mapper.Stored>, with models: some Sequence<Mapper.Model>)
        async throws
    {
        try await base.replace(where: predicate, with: models.map(mapper.entity))
    }
}
