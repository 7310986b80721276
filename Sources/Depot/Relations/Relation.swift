import Synchronization

/// What happens to the rows that reference a row being removed.
///
/// Declared on the ``ToOne`` that holds the foreign key, applied by Depot inside the removing
/// transaction, identically on every store.
public enum DeleteRule: Sendable, Hashable {
    /// Referencing rows are removed too (and, in turn, the rows referencing them).
    case cascade
    /// The referencing rows' foreign key becomes NULL (the key path must be optional).
    case nullify
    /// The removal fails, naming the referencing rows, and writes nothing.
    case deny
    /// Nothing is done: referencing rows keep a key that no longer resolves.
    case noAction
}

/// A relation declared on `Source`: listed in its ``Entity/relations`` so that stores know about
/// it, and used to include related rows (``Repository/fetch(where:orderBy:limit:offset:including:)``),
/// filter across it, and apply delete rules.
public protocol Relation<Source>: Sendable {
    /// The entity the relation starts from.
    associatedtype Source: Entity
    /// The relation as Depot works with it, without Swift types.
    var descriptor: RelationDescriptor { get }
}

/// A foreign key: a column of one table holding the primary key of another.
public struct ForeignKey: Sendable, Hashable {
    /// `Source.column`, for messages.
    public let name: String
    /// The table holding the key (the "many" side).
    public let childTable: TableDescription
    /// The column of ``childTable`` holding the key.
    public let column: String
    /// The table referenced (the "one" side).
    public let parentTable: TableDescription
    /// What removing a parent row does to the rows referencing it.
    public let rule: DeleteRule
    /// The entity types, for validation and for following delete rules further.
    let child: EntityType
    let parent: EntityType

    public static func == (lhs: ForeignKey, rhs: ForeignKey) -> Bool {
        lhs.childTable.name == rhs.childTable.name && lhs.column == rhs.column
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(childTable.name)
        hasher.combine(column)
    }

    /// The primary-key column of the parent table (relations reference single-column keys).
    var parentColumn: String { parentTable.primaryKey.first ?? "" }
}

/// An entity type, wrapped so untyped code can reach its schema and relations.
struct EntityType: Sendable {
    let id: ObjectIdentifier
    let name: String
    let table: @Sendable () -> TableDescription
    let schemaError: @Sendable () -> DepotError?
    let relations: @Sendable () -> [RelationDescriptor]

    init<E: Entity>(_ type: E.Type) {
        id = ObjectIdentifier(type)
        name = String(describing: type)
        table = { E.schema.table }
        schemaError = { E.schema.validationError }
        relations = { E.relations.map(\.descriptor) }
    }
}

/// A relation without Swift types: what it is, and the foreign key(s) it follows.
public struct RelationDescriptor: Sendable {
    public enum Kind: Sendable, Hashable {
        /// The source holds the foreign key.
        case toOne
        /// The target holds a foreign key to the source.
        case toMany
        /// A join table holds foreign keys to both.
        case manyToMany
    }

    /// What kind of relation it is.
    public let kind: Kind
    /// `Source.name`, for messages.
    public let name: String
    /// For `.toOne`, the source's key; for `.toMany`, the target's key to the source; for
    /// `.manyToMany`, the join table's key to the source.
    public let foreignKey: ForeignKey
    /// For `.manyToMany`, the join table's key to the target.
    public let targetKey: ForeignKey?
    /// For an ordered `.toMany`, the target's position column.
    public let positionColumn: String?
    /// Declaration problems found without looking at other entities.
    let problems: [String]
}

extension Entity {
    /// No relations unless the entity lists some.
    public static var relations: [any Relation<Self>] { [] }
}

// MARK: - Declarations

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
    public let descriptor: RelationDescriptor

    /// A to-one relation through the non-optional key column `foreignKey`.
    public init<Key: StorableValue>(_ foreignKey: KeyPath<Source, Key>, onDelete rule: DeleteRule = .deny) {
        self.init(keyPath: foreignKey, rule: rule)
    }

    /// A to-one relation through the optional key column `foreignKey` (NULL: no related row).
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

/// A to-many relation: the `Target` rows whose ``ToOne`` key holds a `Source` row's primary key.
///
/// ```swift
/// static let airports = ToMany(Airport.country)
/// ```
/// An ordered to-many names a `Double` position column of the target, which Depot maintains:
/// included rows come in position order, and ``Repository/move(_:in:to:)`` rewrites one row.
public struct ToMany<Source: Entity, Target: Entity>: Relation {
    public let descriptor: RelationDescriptor
    /// The key on the target side.
    public let inverse: ToOne<Target, Source>

    /// The rows of `Target` referencing a `Source` row through `inverse`.
    public init(_ inverse: ToOne<Target, Source>) {
        self.init(inverse, position: nil)
    }

    /// An ordered to-many: `position` holds each target row's place among its siblings.
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

// MARK: - Validation

extension RelationDescriptor {
    /// Every problem of `entity`'s relations, in one error; `nil` when they are sound. Checked
    /// once per entity type, before its repository's first call that depends on relations.
    static func validationError<Root: Entity>(of entity: Root.Type) -> DepotError? {
        let id = ObjectIdentifier(entity)
        if let known = validated.withLock({ $0[id] }) { return known.error }
        let error = computeError(of: EntityType(entity), relations: Root.relations.map(\.descriptor))
        validated.withLock { $0[id] = Checked(error: error) }
        return error
    }

    /// Checks the relations of each of `entities`, failing with the first entity's problems.
    static func validate(_ entities: [any Entity.Type]) throws {
        func check<Root: Entity>(_ entity: Root.Type) throws {
            if let error = validationError(of: entity) { throw error }
        }
        for entity in entities { try check(entity) }
    }

    private struct Checked: Sendable { var error: DepotError? }
    private static let validated = Mutex<[ObjectIdentifier: Checked]>([:])

    private static func computeError(of entity: EntityType, relations: [RelationDescriptor]) -> DepotError? {
        var problems: [String] = []
        for relation in relations {
            var own = relation.problems
            for key in [relation.foreignKey] + (relation.targetKey.map { [$0] } ?? []) {
                for side in [key.child, key.parent] {
                    if let error = side.schemaError() {
                        own.append("\(side.name)'s schema is invalid: \(error.message)")
                    }
                }
            }
            if relation.kind == .toOne {
                // The parent must know this key, or removing a parent could not apply its rule.
                let inverse = relation.foreignKey.parent.relations().contains {
                    $0.kind != .toOne && $0.foreignKey == relation.foreignKey
                }
                if !inverse {
                    own.append(
                        "\(relation.foreignKey.parent.name) lists no ToMany or ManyToMany through it in its relations, "
                            + "so removing a \(relation.foreignKey.parent.name) could not apply the delete rule")
                }
            }
            if relation.kind == .manyToMany, relation.foreignKey.child.id != relation.targetKey?.child.id {
                own.append("both keys must belong to the same join entity")
            }
            problems += own.map { "relation \(relation.name): \($0)" }
        }
        guard !problems.isEmpty else { return nil }
        let table = entity.table()
        return DepotError(
            .invalidSchema, "Relations of \(entity.name) (table '\(table.name)'): " + problems.joined(separator: "; "),
            table: table.name)
    }

    /// The foreign keys that reference `entity`'s rows: what removing them must look at.
    static func dependents(of entity: EntityType) -> [ForeignKey] {
        var seen: Set<ForeignKey> = []
        return entity.relations().compactMap { relation in
            relation.kind == .toOne || !seen.insert(relation.foreignKey).inserted ? nil : relation.foreignKey
        }
    }
}
