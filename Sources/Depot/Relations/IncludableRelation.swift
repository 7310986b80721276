/// A relation that can be included as it is, or refined.
///
/// ```swift
/// try await countries.fetch(including: [Country.airports])                  // as it is
/// try await countries.fetch(including: [Country.airports.limit(3)])         // refined
/// ```
public protocol IncludableRelation<Source, Target>: IncludeSpec {
    /// The entity whose rows the relation leads to.
    associatedtype Target: Entity
    /// The relation, included with no options.
    var included: Including<Source, Target> { get }
}

extension IncludableRelation {
    /// The tables the plain include reads (see ``Including/tables``).
    public var tables: [TableDescription] { included.tables }

    /// Loads the related rows as the plain include does (see ``Including/load(for:from:)``).
    public func load(for parents: [Source], from reader: any StoreReader) async throws -> IncludedValues {
        try await included.load(for: parents, from: reader)
    }

    /// Only related rows matching `filter`.
    public func filter(_ filter: Filter<Target>) -> Including<Source, Target> { included.filter(filter) }

    /// The related rows of each parent in this order (then by primary key).
    public func sorted(by ordering: Ordering<Target>...) -> Including<Source, Target> {
        included.sorted(ordering)
    }

    /// At most `count` related rows per parent.
    public func limit(_ count: Int) -> Including<Source, Target> { included.limit(count) }

    /// Loads `relations` of the related rows too.
    public func including(_ relations: any IncludeSpec<Target>...) -> Including<Source, Target> {
        included.including(relations)
    }
}

extension ToOne: IncludableRelation {
    /// The relation as an include: each row's related `Target` row, or `nil`.
    public var included: Including<Source, Target> { Including(relation: descriptor) }
}

extension ToMany: IncludableRelation {
    /// The relation as an include: each row's `Target` rows, by primary key (by position when ordered).
    public var included: Including<Source, Target> { Including(relation: descriptor) }
}

extension ManyToMany: IncludableRelation {
    /// The relation as an include: each row's `Target` rows, each once.
    public var included: Including<Source, Target> { Including(relation: descriptor) }
}
