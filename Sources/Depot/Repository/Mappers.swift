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
    /// The entity stored in the database.
    associatedtype Stored: Entity
    /// The domain model the app works with.
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
    /// The incoming value (an API response, a form).
    associatedtype Source
    /// The entity it is stored as.
    associatedtype Target: Entity
    /// The entity a source value stores.
    func entity(from source: Source) throws -> Target
}

/// A persist mapper that merges a source into the stored entity it matches (by primary key or
/// by a unique column: ``Match``), or builds a new one when none is stored; related sources it
/// holds are stored through their own mappers in the same call (``nested``).
///
/// The matched rows of a batch are read in one query, not one per row.
///
/// ```swift
/// struct AirportRenameMapper: UpdateMapper {
///     var match: Match<AirportRename, Airport> { Match(\.icao, \.icao) }
///     func makeEntity(from rename: AirportRename) throws -> Airport {
///         Airport(icao: rename.icao, iata: nil, name: rename.name, elevation: 0)
///     }
///     func update(_ airport: inout Airport, from rename: AirportRename) throws { airport.name = rename.name }
/// }
/// try await airports.persist(renames, mapper: AirportRenameMapper())
/// ```
public protocol UpdateMapper<Source, Target>: Sendable {
    /// The incoming value.
    associatedtype Source: Sendable
    /// The entity it updates.
    associatedtype Target: Entity
    /// Which source values find which stored row.
    var match: Match<Source, Target> { get }
    /// Related values inside a source, stored with it (none by default): a to-one before the
    /// entity (whose key column then names it), a to-many after it (each child's key column set
    /// to the entity's key).
    var nested: [Nested<Source, Target>] { get }
    /// A new entity for a source that matches no stored row.
    func makeEntity(from source: Source) throws -> Target
    /// Applies `source` to the stored entity it matches.
    func update(_ entity: inout Target, from source: Source) throws
}

extension UpdateMapper {
    /// No related values.
    public var nested: [Nested<Source, Target>] { [] }
}
