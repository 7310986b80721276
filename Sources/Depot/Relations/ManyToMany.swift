import Synchronization

/// A many-to-many relation through a join entity holding a ``ToOne`` to each side.
///
/// ```swift
/// struct Membership: Entity { var airport: String; var alliance: String; … }  // key (airport, alliance)
/// extension Membership {
///     static let airport = ToOne<Membership, Airport>(\.airport, onDelete: .cascade)
///     static let alliance = ToOne<Membership, Alliance>(\.alliance, onDelete: .cascade)
/// }
/// extension Airport {
///     static let alliances = ManyToMany(through: Membership.airport, to: Membership.alliance)
/// }
/// ```
public struct ManyToMany<Source: Entity, Target: Entity>: Relation {
    /// The relation without Swift types: kind ``RelationDescriptor/Kind/manyToMany``, with the
    /// join entity's key to `Source` and, as ``RelationDescriptor/targetKey``, its key to `Target`.
    public let descriptor: RelationDescriptor

    /// The `Target` rows reached from a `Source` row through the join rows of `from` and `to`.
    public init<Join: Entity>(through from: ToOne<Join, Source>, to: ToOne<Join, Target>) {
        let name = "\(Source.self).\(Target.schema.tableName)"
        descriptor = RelationDescriptor(
            kind: .manyToMany, name: name, foreignKey: from.descriptor.foreignKey,
            targetKey: to.descriptor.foreignKey, positionColumn: nil,
            problems: from.descriptor.problems + to.descriptor.problems)
    }
}
