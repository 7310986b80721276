/// A plain Swift value stored as one row of a table.
///
/// Conform a struct and describe its table once. Key paths name the columns, so queries are
/// typed: a predicate over `Airport` cannot be handed to another entity's repository.
///
/// ```swift
/// struct Airport: Entity, Equatable {
///     var icao: String
///     var iata: String?
///     var name: String
///     var elevation: Double
///
///     static let schema = Schema<Airport>("airports", primaryKey: \.icao) {
///         Column(\.icao, "icao")
///         Column(\.iata, "iata")
///         Column(\.name, "name")
///         Column(\.elevation, "elevation")
///     }
/// }
/// ```
///
/// Rows are rebuilt field by field from the schema, without reflection or `Codable`, when the
/// columns cover every stored property. A type with other stored properties passes a `decode:`
/// closure to its schema instead.
public protocol Entity: Sendable {
    /// The table, columns and primary key of this entity.
    static var schema: Schema<Self> { get }

    /// The relations of this entity: its ``ToOne`` keys and the ``ToMany``/``ManyToMany``
    /// relations other entities' keys point back through. Empty unless declared.
    static var relations: [any Relation<Self>] { get }
}
