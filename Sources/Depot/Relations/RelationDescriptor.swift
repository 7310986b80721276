import Synchronization

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

    /// Whether both are the same column of the same child table (whatever their rule).
    public static func == (lhs: ForeignKey, rhs: ForeignKey) -> Bool {
        lhs.childTable.name == rhs.childTable.name && lhs.column == rhs.column
    }

    /// Hashes the child table's name and the column, consistently with `==`.
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
    /// Which side holds the foreign key.
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
