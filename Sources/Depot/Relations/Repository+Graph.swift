/// What saving a parent with its children does to the children stored before that are not in
/// the new list.
public enum ReplacedChildren: Sendable, Hashable {
    /// They are removed (their own delete rules apply). The default: the list is the truth.
    case remove
    /// Their key to the parent becomes NULL (the key column must be optional).
    case detach
    /// They stay as they are.
    case keep
}

extension ReplacedChildren {
    /// Throws when this cannot apply to `relation`'s children: `.remove` or `.detach` need a
    /// one-column key on `child`, `.detach` an optional key column.
    func check(_ relation: RelationDescriptor, in table: TableDescription, saving child: Any.Type) throws {
        let key = relation.foreignKey.column
        guard table.primaryKey.count == 1 || self == .keep else {
            throw DepotError(
                .invalidQuery, "saving \(relation.name) with replaced: \(self) needs a one-column key on \(child)",
                table: table.name)
        }
        if self == .detach, let column = table.columnIndex(key), !table.columns[column].isNullable {
            throw DepotError(
                .invalidQuery,
                "saving \(relation.name) with replaced: .detach needs an optional key, and \(child).\(key) is not",
                table: table.name, column: key)
        }
    }

    /// Removes, detaches or keeps the children matching `others`.
    func apply<Child: Entity>(
        to others: PredicateNode, of relation: RelationDescriptor, in children: Repository<Child>,
        _ writer: any StoreWriter
    ) async throws {
        switch self {
        case .keep: break
        case .remove: _ = try await children.delete(where: others, writer)
        case .detach:
            try await Integrity.nullify(relation.foreignKey.column, of: Child.schema.table, where: others, writer)
        }
    }
}

extension Repository {
    /// Stores `parent` and its related rows in `relation`, in one transaction.
    ///
    /// ```swift
    /// try await airports.save(oslo, with: [north, south], in: Airport.runways)
    /// ```
    /// Each child is stored with its key column set to the parent's key (whatever the struct held);
    /// in an ordered relation the positions become 1, 2, 3, … in the list's order. Children the
    /// parent had before that are not in the list are handled by `replaced`: removed by default.
    ///
    /// - Parameters:
    ///   - parent: The entity to upsert.
    ///   - children: Its children, upserted; a key appearing twice keeps the last one.
    ///   - relation: The to-many relation from `Root` to the children.
    ///   - replaced: What happens to the parent's stored children missing from `children`.
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when `replaced` is `.remove` or `.detach`
    ///   and `Child` has a composite primary key, or `.detach` and the key column is not optional;
    ///   `.constraintViolation` when a `.deny` rule refuses the removal of a child (rows still
    ///   reference it), or another ``ToOne`` key names no stored row; and the kinds every call may
    ///   throw (see ``Repository``).
    ///   Nothing is written on error.
    public func save<Child: Entity>(
        _ parent: Root, with children: some Sequence<Child>, in relation: ToMany<Root, Child>,
        replaced: ReplacedChildren = .remove
    ) async throws {
        let schema = try checkedSchema()
        _ = try checkedRelations()
        let parentBatch = try batch(of: CollectionOfOne(parent), duplicates: .reject)
        let parentKey = schema.key(of: parent)[0]
        let childRepository = Repository<Child>(context: context)
        let childSchema = try childRepository.checkedSchema()
        let key = relation.descriptor.foreignKey
        var childBatch = try childRepository.batch(of: children, duplicates: .keepLast)
        let width = childBatch.columns.count
        let keyColumn = try childSchema.table.requireColumn(key.column)
        let positionColumn = try relation.descriptor.positionColumn.map { try childSchema.table.requireColumn($0) }
        for row in 0..<childBatch.count {
            childBatch.values[row * width + keyColumn] = parentKey
            if let positionColumn { childBatch.values[row * width + positionColumn] = .double(Double(row + 1)) }
        }
        try replaced.check(relation.descriptor, in: childSchema.table, saving: Child.self)
        let childKeyIndex = childSchema.primaryKeyIndices.first ?? 0
        let keptKeys = (0..<childBatch.count).map { childBatch.values[$0 * width + childKeyIndex] }
        let batch = childBatch
        try await context.atomically { writer in
            try await write(parentBatch, mode: .upsert, writer)
            var others = PredicateNode.compare(column: key.column, .equal, parentKey)
            if !keptKeys.isEmpty {
                others = .and([others, .not(.isIn(column: childSchema.table.primaryKey[0], keptKeys))])
            }
            try await replaced.apply(to: others, of: relation.descriptor, in: childRepository, writer)
            try await childRepository.write(batch, mode: .upsert, writer)
        }
    }
}

extension Repository {
    /// Stores `entity` and the row it refers to through `relation`, in one transaction: the
    /// related row first, then `entity` with its key column set to the related row's key.
    ///
    /// ```swift
    /// try await users.save(user, with: avatar, in: User.image)  // the seed's user + image
    /// ```
    /// A row the entity referred to before stays (other rows may refer to it too).
    ///
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when another ``ToOne`` key of either
    ///   row names no stored row, and the kinds every call may throw (see ``Repository``).
    ///   Nothing is written on error.
    public func save<Target: Entity>(_ entity: Root, with related: Target, in relation: ToOne<Root, Target>)
        async throws
    {
        let schema = try checkedSchema()
        _ = try checkedRelations()
        let targetRepository = Repository<Target>(context: context)
        let targetBatch = try targetRepository.batch(of: CollectionOfOne(related), duplicates: .reject)
        var batch = try batch(of: CollectionOfOne(entity), duplicates: .reject)
        batch.values[try schema.table.requireColumn(relation.column)] = Target.schema.key(of: related)[0]
        let entityBatch = batch
        try await context.atomically { writer in
            try await targetRepository.write(targetBatch, mode: .upsert, writer)
            try await write(entityBatch, mode: .upsert, writer)
        }
    }

    /// Stores each of `sources` as an entity and its children in `relation`, through `mapper`
    /// and `children`, all in one transaction (see ``save(_:with:in:replaced:)``).
    ///
    /// ```swift
    /// try await airports.persist(dtos, by: AirportMapper(), children: { $0.runways.map(Runway.init) },
    ///                            in: Airport.runways)
    /// ```
    /// Every source is mapped before anything is written: a mapping error writes nothing.
    ///
    /// - Throws: An error `mapper` or `children` throws, as it is (not wrapped in a
    ///   ``DepotError``); otherwise what ``save(_:with:in:replaced:)`` throws. Nothing is written
    ///   on error.
    public func persist<Mapper: PersistMapper, Child: Entity>(
        _ sources: some Sequence<Mapper.Source>, by mapper: Mapper,
        children: (Mapper.Source) throws -> [Child], in relation: ToMany<Root, Child>,
        replaced: ReplacedChildren = .remove
    ) async throws where Mapper.Target == Root {
        let graphs = try sources.map { (try mapper.entity(from: $0), try children($0)) }
        try await context.atomically { writer in
            let inside = Repository(context: .transaction(writer))
            for (parent, children) in graphs {
                try await inside.save(parent, with: children, in: relation, replaced: replaced)
            }
        }
    }
}
