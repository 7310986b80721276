import Synchronization

/// A to-one relation: `Source` holds a foreign key column with the primary key of `Target`.
///
/// ```swift
/// extension Airport {
///     static let country = ToOne<Airport, Country>(\.countryCode, onDelete: .cascade)
///     static var relations: [any Relation<Airport>] { [country] }
/// }
/// extension Country {
///     static let airports = ToMany(Airport.country)
///     static var relations: [any Relation<Country>] { [airports] }
/// }
/// ```
/// Writes of `Source` rows whose key names no stored `Target` fail, naming the row and the key.
/// The target must declare the inverse (``ToMany`` or ``ManyToMany``), so that removing a target
/// row knows which rows reference it; the ``DeleteRule`` is declared here, on the key.
public struct ToOne<Source: Entity, Target: Entity>: Relation {
    /// The relation without Swift types: kind ``RelationDescriptor/Kind/toOne``, with the key
    /// column of `Source` and the delete rule.
    public let descriptor: RelationDescriptor

    /// A to-one relation through the non-optional key column `foreignKey`.
    ///
    /// Declaration problems (a key path that is not a column, a key whose type differs from
    /// `Target`'s one-column primary key, `.nullify` on a non-optional key) do not crash: every
    /// repository call that depends on relations throws them as `.invalidSchema`.
    ///
    /// - Parameters:
    ///   - foreignKey: The column of `Source` holding `Target`'s primary key.
    ///   - rule: What removing a `Target` row does to the `Source` rows referencing it.
    public init<Key: StorableValue>(_ foreignKey: KeyPath<Source, Key>, onDelete rule: DeleteRule = .deny) {
        self.init(keyPath: foreignKey, rule: rule)
    }

    /// A to-one relation through the optional key column `foreignKey` (NULL: no related row).
    ///
    /// ```swift
    /// static let hub = ToOne<Airline, Airport>(\.hubICAO, onDelete: .nullify)  // hubICAO: String?
    /// ```
    public init<Key: StorableValue>(_ foreignKey: KeyPath<Source, Key?>, onDelete rule: DeleteRule = .deny) {
        self.init(keyPath: foreignKey, rule: rule)
    }

    private init(keyPath: AnyKeyPath, rule: DeleteRule) {
        let schema = Source.schema
        let index = schema.columnIndexByKeyPath[KeyPathBox(keyPath)]
        let column = index.map { schema.columns[$0].name } ?? "?"
        let name = "\(Source.self).\(column)"
        var problems: [String] = []
        if index == nil { problems.append("its key path \(keyPath) is not a column of \(Source.self)") }
        let parent = Target.schema
        if parent.primaryKeyIndices.count != 1 {
            problems.append("\(Target.self) must have a one-column primary key to be referenced")
        } else if let index {
            let key = parent.columns[parent.primaryKeyIndices[0]]
            if key.type != schema.columns[index].type {
                problems.append(
                    "column '\(column)' is \(schema.columns[index].type) but \(Target.self).\(key.name) is \(key.type)")
            }
            if rule == .nullify && !schema.columns[index].isNullable {
                problems.append("onDelete: .nullify needs an optional key column, and '\(column)' is not optional")
            }
        }
        let key = ForeignKey(
            name: name, childTable: schema.table, column: column, parentTable: parent.table, rule: rule,
            child: EntityType(Source.self), parent: EntityType(Target.self))
        descriptor = RelationDescriptor(
            kind: .toOne, name: name, foreignKey: key, targetKey: nil, positionColumn: nil, problems: problems)
    }

    /// The foreign key column's name.
    public var column: String { descriptor.foreignKey.column }
}
