import Synchronization

/// A to-many relation: the `Target` rows whose ``ToOne`` key holds a `Source` row's primary key.
///
/// ```swift
/// static let airports = ToMany(Airport.country)
/// ```
/// An ordered to-many names a `Double` position column of the target, which Depot maintains:
/// included rows come in position order, and ``Repository/move(_:in:to:)`` rewrites one row.
public struct ToMany<Source: Entity, Target: Entity>: Relation {
    /// The relation without Swift types: kind ``RelationDescriptor/Kind/toMany``, with the
    /// inverse's foreign key and the position column, if ordered.
    public let descriptor: RelationDescriptor
    /// The key on the target side.
    public let inverse: ToOne<Target, Source>

    /// The rows of `Target` referencing a `Source` row through `inverse`.
    public init(_ inverse: ToOne<Target, Source>) {
        self.init(inverse, position: nil)
    }

    /// An ordered to-many: `position` holds each target row's place among its siblings.
    ///
    /// ```swift
    /// static let runways = ToMany(Runway.airport, orderedBy: \.position)  // position: Double
    /// ```
    public init(_ inverse: ToOne<Target, Source>, orderedBy position: KeyPath<Target, Double>) {
        self.init(inverse, position: position)
    }

    private init(_ inverse: ToOne<Target, Source>, position: KeyPath<Target, Double>?) {
        self.inverse = inverse
        let name = "\(Source.self).\(Target.schema.tableName)"
        var problems = inverse.descriptor.problems
        var positionColumn: String?
        if let position {
            if let index = Target.schema.columnIndexByKeyPath[KeyPathBox(position)] {
                positionColumn = Target.schema.columns[index].name
            } else {
                problems.append("its position \(position) is not a column of \(Target.self)")
            }
        }
        descriptor = RelationDescriptor(
            kind: .toMany, name: name, foreignKey: inverse.descriptor.foreignKey, targetKey: nil,
            positionColumn: positionColumn, problems: problems)
    }
}
