/// A relation to include, with the options applied so far. Made by ``ToOne``, ``ToMany`` and
/// ``ManyToMany``'s `filter`, `sorted(by:)`, `limit(_:)` and `including(_:)`.
public struct Including<Source: Entity, Target: Entity>: IncludeSpec {
    let relation: RelationDescriptor
    var filter: Filter<Target>?
    var ordering: [Ordering<Target>] = []
    var limit: Int?
    var nested: [any IncludeSpec<Target>] = []

    /// Only related rows matching `filter` (combined with an earlier filter by `&&`).
    public func filter(_ filter: Filter<Target>) -> Self {
        var copy = self
        copy.filter = self.filter.map { $0 && filter } ?? filter
        return copy
    }

    /// The related rows of each parent in this order (then by primary key).
    public func sorted(by ordering: Ordering<Target>...) -> Self { sorted(ordering) }

    func sorted(_ ordering: [Ordering<Target>]) -> Self {
        var copy = self
        copy.ordering = ordering
        return copy
    }

    /// At most `count` related rows per parent (the first in the include's order).
    public func limit(_ count: Int) -> Self {
        var copy = self
        copy.limit = count
        return copy
    }

    /// Loads `relations` of the related rows too (one more query per relation).
    public func including(_ relations: any IncludeSpec<Target>...) -> Self { including(relations) }

    func including(_ relations: [any IncludeSpec<Target>]) -> Self {
        var copy = self
        copy.nested += relations
        return copy
    }

    /// The target's table, the join table of a many-to-many, the tables of the filter's
    /// subqueries and those of nested includes: what an observation with this include watches.
    public var tables: [TableDescription] {
        var tables = [Target.schema.table] + (filter?.node.subqueryTables ?? [])
        if relation.kind == .manyToMany { tables.append(relation.foreignKey.childTable) }
        return tables + nested.flatMap(\.tables)
    }

    /// Loads the related rows of `parents` with one query (two for a many-to-many), plus one per
    /// nested include; ``Repository/fetch(where:orderBy:limit:offset:including:)`` calls it.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidSchema` when `Source`'s relations or `Target`'s
    ///   schema are declared wrongly, `.invalidQuery` for a negative ``limit(_:)``, and what
    ///   reading the rows throws.
    public func load(for parents: [Source], from reader: any StoreReader) async throws -> IncludedValues {
        if let error = RelationDescriptor.validationError(of: Source.self) { throw error }
        if let error = Target.schema.validationError { throw error }
        if let limit, limit < 0 {
            throw DepotError(
                .invalidQuery, "include \(relation.name): limit must not be negative (got \(limit))",
                table: Target.schema.tableName)
        }
        let values: [any Sendable]
        switch relation.kind {
        case .toOne: values = try await loadToOne(parents, reader)
        case .toMany: values = try await loadToMany(parents, reader)
        case .manyToMany: values = try await loadManyToMany(parents, reader)
        }
        return IncludedValues(key: relation.key, values: values)
    }

    // MARK: - Loading

    /// The query of the target rows whose `column` is one of `keys`, with this include's options.
    private func targetQuery(_ column: String, _ keys: [StoredValue], perParent: Bool) -> SelectQuery {
        var ordering = ordering.map(\.term)
        if ordering.isEmpty, let position = relation.positionColumn {
            ordering = [.column(position, descending: false)]
        }
        let selection = PredicateNode.isIn(column: column, keys)
        var query = SelectQuery(
            table: Target.schema.table, predicate: filter.map { .and([selection, $0.node]) } ?? selection,
            ordering: ordering)
        if perParent, let limit { query.limitPerGroup = GroupLimit(column: column, limit: limit) }
        return query
    }

    /// Targets of `query`, their own includes loaded, and each one's value of `column`.
    ///
    /// Per-row work stays free of new generic types (tuples, dictionaries of targets): in code
    /// that is not specialized, each one costs a runtime metadata lookup per row.
    private func targets(_ query: SelectQuery, keyedBy column: String, _ reader: any StoreReader) async throws
        -> (keys: [StoredValue], values: [Loaded<Target>])
    {
        let found = try await targetEntities(query, keyedBy: column, reader)
        return (found.keys, try await Loaded.load(found.entities, nested, reader))
    }

    /// Targets of `query`, and each one's value of `column`.
    private func targetEntities(_ query: SelectQuery, keyedBy column: String, _ reader: any StoreReader)
        async throws -> (keys: [StoredValue], entities: [Target])
    {
        let schema = Target.schema
        let column = try query.table.requireColumn(column)
        let entities = try await reader.scan(query) { cursor in try schema.decodeAll(&cursor) }
        return (schema.values(of: entities, column: column), entities)
    }

    private func loadToOne(_ parents: [Source], _ reader: any StoreReader) async throws -> [any Sendable] {
        let key = relation.foreignKey
        let references = Source.schema.values(of: parents, column: try Source.schema.table.requireColumn(key.column))
        let distinct = StoredValue.distinct(references)
        guard !distinct.isEmpty else { return references.map { _ in Loaded<Target>?.none } }
        let found = try await targets(
            targetQuery(key.parentColumn, distinct, perParent: false), keyedBy: key.parentColumn, reader)
        var byKey = KeyPositions(capacity: found.keys.count)
        for (position, target) in found.keys.enumerated() { byKey.insert(position, forKey: target) }
        return references.map { reference in byKey[reference].map { found.values[$0] } }
    }

    private func loadToMany(_ parents: [Source], _ reader: any StoreReader) async throws -> [any Sendable] {
        let key = relation.foreignKey
        let parentKeys = try Self.keys(of: parents)
        let query = targetQuery(key.column, StoredValue.distinct(parentKeys), perParent: true)
        guard nested.isEmpty else {
            let found = try await targets(query, keyedBy: key.column, reader)
            return Self.group(keys: found.keys, under: parentKeys) { found.values[$0] }
        }
        // Nothing nested: each target is wrapped once, straight into its parent's list.
        let found = try await targetEntities(query, keyedBy: key.column, reader)
        return Self.group(keys: found.keys, under: parentKeys) { Loaded(entity: found.entities[$0], related: [:]) }
    }

    /// The (one-column) primary key of each of `parents`.
    private static func keys(of parents: [Source]) throws -> [StoredValue] {
        let schema = Source.schema
        return schema.values(of: parents, column: schema.primaryKeyIndices[0])
    }

    /// The targets (`value(i)` is the one with key `keys[i]`) gathered under each of `parents`, in
    /// their order: O(n + m).
    static func group(keys: [StoredValue], under parents: [StoredValue], _ value: (Int) -> Loaded<Target>)
        -> [any Sendable]
    {
        // Each parent key's first parent, and each value's owner.
        var parentIndex = KeyPositions(capacity: parents.count)
        for (index, parent) in parents.enumerated() { parentIndex.insert(index, forKey: parent) }
        var owners = [Int](repeating: -1, count: keys.count)
        var starts = [Int](repeating: 0, count: parents.count + 1)
        for (position, key) in keys.enumerated() {
            guard let owner = parentIndex[key] else { continue }
            owners[position] = owner
            starts[owner + 1] += 1
        }
        // The values by owner, each owner's in their query order (a counting sort): every list
        // is then built at its size in one pass, with no growing or uniqueness check per append.
        for owner in parents.indices { starts[owner + 1] += starts[owner] }
        var ordered = [Int](repeating: 0, count: starts[parents.count])
        var next = starts
        for (position, owner) in owners.enumerated() where owner >= 0 {
            ordered[next[owner]] = position
            next[owner] += 1
        }
        var lists: [[Loaded<Target>]] = []
        lists.reserveCapacity(parents.count)
        for owner in parents.indices {
            var list: [Loaded<Target>] = []
            list.reserveCapacity(starts[owner + 1] - starts[owner])
            for position in ordered[starts[owner]..<starts[owner + 1]] { list.append(value(position)) }
            lists.append(list)
        }
        var grouped: [any Sendable] = []
        grouped.reserveCapacity(parents.count)
        // A parent whose key an earlier parent has shares that parent's list.
        for parent in parents { grouped.append(lists[parentIndex[parent] ?? 0]) }
        return grouped
    }

    private func loadManyToMany(_ parents: [Source], _ reader: any StoreReader) async throws -> [any Sendable] {
        guard let to = relation.targetKey else { return parents.map { _ in [Loaded<Target>]() } }
        let from = relation.foreignKey
        let join = from.childTable
        let fromIndex = try join.requireColumn(from.column)
        let toIndex = try join.requireColumn(to.column)
        let parentKeys = try Self.keys(of: parents)
        let pairs = try await reader.fetch(
            SelectQuery(table: join, predicate: .isIn(column: from.column, StoredValue.distinct(parentKeys)))
        ) { values in (values[fromIndex], values[toIndex]) }
        let targetKeys = StoredValue.distinct(pairs.map(\.1))
        guard !targetKeys.isEmpty else { return parents.map { _ in [Loaded<Target>]() } }
        let found = try await targets(
            targetQuery(to.parentColumn, targetKeys, perParent: false), keyedBy: to.parentColumn, reader)
        var rank: [StoredValue: Int] = [:]
        for (position, target) in found.keys.enumerated() { rank[target] = position }
        var byParent: [StoredValue: [Int]] = [:]
        for (parent, target) in pairs {
            if let position = rank[target] { byParent[parent, default: []].append(position) }
        }
        return parentKeys.map { parent -> [Loaded<Target>] in
            // The include's order, as the target query returned it; each target once.
            let positions = Array(Set(byParent[parent] ?? [])).sorted()
            return positions.prefix(limit ?? positions.count).map { found.values[$0] }
        }
    }
}

extension StoredValue {
    /// The values other than NULL, each once, in first-seen order: keys bound in the order their
    /// rows came (usually key order), which the engines index faster than a hash set's order.
    static func distinct(_ values: [StoredValue]) -> [StoredValue] {
        var seen = KeyPositions(capacity: values.count)
        var distinct: [StoredValue] = []
        distinct.reserveCapacity(values.count)
        for value in values where !value.isNull && seen.insert(distinct.count, forKey: value) { distinct.append(value) }
        return distinct
    }
}

extension RelationDescriptor {
    /// The key a relation's included values are kept under in ``Loaded``.
    var key: String { "\(kind):\(foreignKey.name)>\(targetKey?.name ?? "")" }
}
