/// Converts between a stored entity and the domain model the rest of the app uses.
///
/// ```swift
/// struct UserMapper: DomainMapper {
///     func model(from record: Loaded<UserRecord>) throws -> User { User(id: record.id, name: record.name) }
/// }
/// let users = store.repository(UserRecord.self).mapped(by: UserMapper())  // hands out User
/// ```
///
/// A model built from several tables names the relations it reads in ``includes``; every read of
/// a ``MappedRepository`` loads them (one query per relation), and `model(from:)` reads them
/// through the ``Loaded`` value (`try user[UserEntity.image]`). Its properties read as the
/// entity's (`record.name`), with or without includes.
public protocol DomainMapper<Stored, Model>: Sendable {
    /// The entity stored in the database.
    associatedtype Stored: Entity
    /// The domain model the app works with.
    associatedtype Model: Sendable
    /// The relations loaded with every entity this mapper reads (none by default).
    var includes: [any IncludeSpec<Stored>] { get }
    /// The domain model for a stored entity, with the related rows of ``includes``.
    func model(from entity: Loaded<Stored>) throws -> Model
}

/// A ``DomainMapper`` that also turns models back into entities, so a ``MappedRepository`` can
/// `insert`, `upsert` and `replace` models (models that come only from stored rows, or only
/// from API responses through ``UpdateMapper``, need just ``DomainMapper``).
///
/// ```swift
/// struct NoteMapper: WritableDomainMapper {
///     func model(from row: Loaded<NoteRow>) -> Note { Note(id: row.id, text: row.text) }
///     func entity(from note: Note) -> NoteRow { NoteRow(id: note.id, text: note.text) }
/// }
/// try await store.repository(NoteRow.self).mapped(by: NoteMapper()).upsert(note)
/// ```
public protocol WritableDomainMapper<Stored, Model>: DomainMapper {
    /// The entity that stores a domain model (its related rows are not written).
    func entity(from model: Model) throws -> Stored
}

extension DomainMapper {
    /// No relations.
    public var includes: [any IncludeSpec<Stored>] { [] }

    /// The models of `entities`, their ``includes`` read from `reader` (one query per relation).
    ///
    /// - Throws: What reading the includes throws; ``DepotError`` of kind `.mappingFailed`
    ///   wrapping an error ``model(from:)`` throws (a ``DepotError`` it throws passes through).
    public func models(of entities: [Stored], from reader: any StoreReader) async throws -> [Model] {
        try Self.mapping(try await Loaded.load(entities, includes, reader), model(from:))
    }

    /// Maps each value, naming the mapper in an error it throws.
    static func mapping<Value, Output>(_ values: [Value], _ transform: (Value) throws -> Output) throws -> [Output] {
        try mappingFailures(values, transform) { error in
            DepotError(
                .mappingFailed, "\(Self.self) could not map a stored \(Stored.self): \(error)",
                table: Stored.schema.tableName, underlying: error)
        }
    }
}

/// Maps every value, letting a ``DepotError`` pass and turning any other error into `failure`'s.
func mappingFailures<Value, Output>(
    _ values: some Sequence<Value>, _ transform: (Value) throws -> Output, failure: (any Error) -> DepotError
) throws -> [Output] {
    try values.map { value in
        do {
            return try transform(value)
        } catch let error as DepotError {
            throw error
        } catch {
            throw failure(error)
        }
    }
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
