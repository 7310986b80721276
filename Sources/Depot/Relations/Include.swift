/// Related rows to load with a query's results: a relation, optionally filtered, sorted and
/// limited per parent, with further relations of its own.
///
/// ```swift
/// let countries = try await store.repository(Country.self).fetch(
///     where: \.continent == "EU",
///     including: [Country.airports.filter(\.kind == "large_airport")
///                     .sorted(by: .descending(\.elevation)).limit(3)
///                     .including(Airport.runways)])
/// for country in countries {
///     print(country.name, country[Country.airports].map(\.name))
/// }
/// ```
/// Each relation level is one query, whatever the number of parents (their keys travel as one
/// bound array, so any number works), and rows are matched to parents by hashing: O(n + m).
public protocol IncludeSpec<Source>: Sendable {
    /// The entity whose rows the related rows are loaded for.
    associatedtype Source: Entity
    /// The related values of each of `parents`, in their order, and the key they are kept under.
    func load(for parents: [Source], from reader: any StoreReader) async throws -> IncludedValues
    /// Every table the include reads, nested includes and filters across relations included.
    var tables: [TableDescription] { get }
}

/// What one include loaded: a value per parent, under the relation's key.
public struct IncludedValues: Sendable {
    let key: String
    let values: [any Sendable]
}

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

    public var tables: [TableDescription] {
        var tables = [Target.schema.table] + (filter?.node.subqueryTables ?? [])
        if relation.kind == .manyToMany { tables.append(relation.foreignKey.childTable) }
        return tables + nested.flatMap(\.tables)
    }

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
        let schema = Target.schema
        let column = try query.table.requireColumn(column)
        let entities = try await reader.scan(query) { cursor in try schema.decodeAll(&cursor) }
        let keys = schema.values(of: entities, column: column)
        var rows: [Loaded<Target>] = []
        rows.reserveCapacity(entities.count)
        for entity in entities { rows.append(Loaded(entity: entity, related: [:])) }
        return (keys, try await Loaded.attach(nested, to: rows, reader))
    }

    private func loadToOne(_ parents: [Source], _ reader: any StoreReader) async throws -> [any Sendable] {
        let key = relation.foreignKey
        let references = Source.schema.values(of: parents, column: try Source.schema.table.requireColumn(key.column))
        let distinct = StoredValue.distinct(references)
        guard !distinct.isEmpty else { return references.map { _ in Loaded<Target>?.none } }
        let found = try await targets(
            targetQuery(key.parentColumn, distinct, perParent: false), keyedBy: key.parentColumn, reader)
        var byKey: [StoredValue: Int] = [:]
        byKey.reserveCapacity(found.keys.count)
        for (position, target) in found.keys.enumerated() where byKey[target] == nil { byKey[target] = position }
        return references.map { reference in byKey[reference].map { found.values[$0] } }
    }

    private func loadToMany(_ parents: [Source], _ reader: any StoreReader) async throws -> [any Sendable] {
        let key = relation.foreignKey
        let parentKeys = try Self.keys(of: parents)
        let found = try await targets(
            targetQuery(key.column, StoredValue.distinct(parentKeys), perParent: true), keyedBy: key.column, reader)
        return Self.group(found.values, keys: found.keys, under: parentKeys)
    }

    /// The (one-column) primary key of each of `parents`.
    private static func keys(of parents: [Source]) throws -> [StoredValue] {
        let schema = Source.schema
        return schema.values(of: parents, column: schema.primaryKeyIndices[0])
    }

    /// `values` gathered under each of `parents`, by their `keys`, in their order: O(n + m).
    static func group(_ values: [Loaded<Target>], keys: [StoredValue], under parents: [StoredValue]) -> [any Sendable] {
        // Each parent key's first parent, then each value's owner and each list's length:
        // one hash per parent and per value, one allocation per list.
        var parentIndex: [StoredValue: Int] = [:]
        parentIndex.reserveCapacity(parents.count)
        for (index, parent) in parents.enumerated() where parentIndex[parent] == nil { parentIndex[parent] = index }
        var owners = [Int](repeating: -1, count: keys.count)
        var counts = [Int](repeating: 0, count: parents.count)
        for (position, key) in keys.enumerated() {
            guard let owner = parentIndex[key] else { continue }
            owners[position] = owner
            counts[owner] += 1
        }
        var lists: [[Loaded<Target>]] = []
        lists.reserveCapacity(parents.count)
        for count in counts {
            var list: [Loaded<Target>] = []
            list.reserveCapacity(count)
            lists.append(list)
        }
        for (position, owner) in owners.enumerated() where owner >= 0 { lists[owner].append(values[position]) }
        var grouped: [any Sendable] = []
        grouped.reserveCapacity(parents.count)
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
        var seen: Set<StoredValue> = []
        seen.reserveCapacity(values.count)
        var distinct: [StoredValue] = []
        distinct.reserveCapacity(values.count)
        for value in values where !value.isNull && seen.insert(value).inserted { distinct.append(value) }
        return distinct
    }
}

extension RelationDescriptor {
    /// The key a relation's included values are kept under in ``Loaded``.
    var key: String { "\(kind):\(foreignKey.name)>\(targetKey?.name ?? "")" }
}

/// An entity with the related rows an include loaded, read by relation:
/// `country[Country.airports]`, `airport[Airport.country]`. Its own properties read through it
/// directly (`country.name`) or as ``entity``.
@dynamicMemberLookup
public struct Loaded<Root: Entity>: Sendable {
    /// The entity itself.
    public let entity: Root
    var related: [String: any Sendable]

    /// A property of the entity.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Root, Value>) -> Value {
        entity[keyPath: keyPath]
    }

    /// The included rows of a to-many relation.
    ///
    /// Reading a relation the fetch did not include is a programming error.
    public subscript<Target>(_ relation: ToMany<Root, Target>) -> [Loaded<Target>] {
        value(of: relation.descriptor, as: [Loaded<Target>].self)
    }

    /// The included rows of a many-to-many relation.
    public subscript<Target>(_ relation: ManyToMany<Root, Target>) -> [Loaded<Target>] {
        value(of: relation.descriptor, as: [Loaded<Target>].self)
    }

    /// The included row of a to-one relation: `nil` when the key is NULL (or the row is
    /// filtered out by the include).
    public subscript<Target>(_ relation: ToOne<Root, Target>) -> Loaded<Target>? {
        value(of: relation.descriptor, as: Loaded<Target>?.self)
    }

    private func value<T>(of relation: RelationDescriptor, as type: T.Type) -> T {
        // Looked up first: a missing entry would otherwise cast to `T` when `T` is an optional.
        guard let stored = related[relation.key], let value = stored as? T else {
            preconditionFailure("\(relation.name) was not included in the fetch of \(Root.self): add it to including:")
        }
        return value
    }

    /// Wraps `entities` and runs each of `includes` over them (one query per relation level).
    static func load(_ entities: [Root], _ includes: [any IncludeSpec<Root>], _ reader: any StoreReader)
        async throws -> [Loaded<Root>]
    {
        try await attach(includes, to: entities.map { Loaded(entity: $0, related: [:]) }, reader)
    }

    /// `loaded` with the related values of each of `includes` added.
    static func attach(_ includes: [any IncludeSpec<Root>], to loaded: [Loaded<Root>], _ reader: any StoreReader)
        async throws -> [Loaded<Root>]
    {
        guard !includes.isEmpty, !loaded.isEmpty else { return loaded }
        var loaded = loaded
        var entities: [Root] = []
        entities.reserveCapacity(loaded.count)
        for row in loaded { entities.append(row.entity) }
        var seen: Set<String> = []
        for include in includes {
            let values = try await include.load(for: entities, from: reader)
            guard seen.insert(values.key).inserted else {
                throw DepotError(
                    .invalidQuery,
                    "the fetch of \(Root.self) includes one relation twice: give each relation one include",
                    table: Root.schema.tableName)
            }
            for index in loaded.indices { loaded[index].related[values.key] = values.values[index] }
        }
        return loaded
    }
}

extension Loaded: Equatable where Root: Equatable {
    /// Equal entities; included rows are not compared.
    public static func == (lhs: Loaded, rhs: Loaded) -> Bool { lhs.entity == rhs.entity }
}

// MARK: - Relations as includes

/// A relation that can be included as it is, or refined.
public protocol IncludableRelation<Source, Target>: IncludeSpec {
    associatedtype Target: Entity
    /// The relation, included with no options.
    var included: Including<Source, Target> { get }
}

extension IncludableRelation {
    public var tables: [TableDescription] { included.tables }

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
    public var included: Including<Source, Target> { Including(relation: descriptor) }
}

extension ToMany: IncludableRelation {
    public var included: Including<Source, Target> { Including(relation: descriptor) }
}

extension ManyToMany: IncludableRelation {
    public var included: Including<Source, Target> { Including(relation: descriptor) }
}

extension Repository {
    /// The entities matching `predicate`, each with the related rows of `includes`.
    ///
    /// ```swift
    /// let airports = try await store.repository(Airport.self).fetch(
    ///     where: \.kind == "large_airport", including: [Airport.country])
    /// airports[0][Airport.country]?.name  // "Norway"
    /// ```
    /// The parents are one query; each included relation one more, at every nesting level.
    public func fetch(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [],
        limit: Int? = nil, offset: Int? = nil, including includes: [any IncludeSpec<Root>]
    ) async throws -> [Loaded<Root>] {
        _ = try checkedRelations()
        let parents = try await fetch(where: predicate, orderBy: ordering, limit: limit, offset: offset)
        return try await Loaded.load(parents, includes, context.reader)
    }
}

// MARK: - Predicates across relations

extension ToOne {
    /// Rows whose related `Target` row matches `filter` (a subquery on the target's table).
    ///
    /// ```swift
    /// try await airports.fetch(where: Airport.country.matches(\.continent == "EU"))
    /// // SQL: WHERE "country" IN (SELECT "code" FROM "countries" WHERE "code" IS NOT NULL AND ("continent" = ?))
    /// ```
    public func matches(_ filter: Filter<Target>) -> Filter<Source> {
        let key = descriptor.foreignKey
        return Filter(
            .isInSubquery(
                column: key.column, Subquery(table: key.parentTable, column: key.parentColumn, predicate: filter.node)))
    }
}

extension ToMany {
    /// Rows with at least one related row matching `filter` (any related row when omitted).
    ///
    /// ```swift
    /// try await countries.fetch(where: Country.airports.any(\.kind == "large_airport"))
    /// ```
    public func any(_ filter: Filter<Target> = .all) -> Filter<Source> {
        let key = descriptor.foreignKey
        return Filter(
            .isInSubquery(
                column: key.parentColumn, Subquery(table: key.childTable, column: key.column, predicate: filter.node)))
    }

    /// Rows with no related row matching `filter` (no related row at all when omitted).
    public func none(_ filter: Filter<Target> = .all) -> Filter<Source> { !any(filter) }
}

extension ManyToMany {
    /// Rows related to at least one `Target` row matching `filter`.
    public func any(_ filter: Filter<Target> = .all) -> Filter<Source> {
        let from = descriptor.foreignKey
        guard let to = descriptor.targetKey else { return .nothing }
        let targets = PredicateNode.isInSubquery(
            column: to.column, Subquery(table: to.parentTable, column: to.parentColumn, predicate: filter.node))
        return Filter(
            .isInSubquery(
                column: from.parentColumn, Subquery(table: from.childTable, column: from.column, predicate: targets)))
    }

    /// Rows related to no `Target` row matching `filter`.
    public func none(_ filter: Filter<Target> = .all) -> Filter<Source> { !any(filter) }
}

// MARK: - Observing a query with includes

extension Repository {
    /// The entities matching `predicate` with the related rows of `includes`, now and again after
    /// every commit to any table the query or its includes read.
    ///
    /// ```swift
    /// for try await countries in countries.observe(where: \.continent == "EU", including: [Country.airports]) {
    ///     show(countries)  // re-emitted when an airport of any country changes, too
    /// }
    /// ```
    /// Each element is a fresh fetch (no diff); commits made while the consumer is busy coalesce
    /// into the next one (the store's observers share one commit subscription). Leaving the loop or cancelling the task ends the observation.
    public func observe(
        where predicate: Filter<Root>? = nil, orderBy ordering: [Ordering<Root>] = [], limit: Int? = nil,
        including includes: [any IncludeSpec<Root>]
    ) -> IncludeObservation<Root> {
        let tables =
            ((try? query(predicate, ordering, limit: limit, offset: nil).tables) ?? [])
            + includes.flatMap(\.tables)
        return IncludeObservation(
            repository: self, tables: Set(tables.map(\.name)),
            fetch: { repository in
                try await repository.fetch(where: predicate, orderBy: ordering, limit: limit, including: includes)
            })
    }
}

/// The live results of a query with included relations (see `Repository.observe(…including:)`).
public struct IncludeObservation<Root: Entity>: AsyncSequence, Sendable {
    public typealias Element = [Loaded<Root>]
    let repository: Repository<Root>
    let tables: Set<String>
    let fetch: @Sendable (Repository<Root>) async throws -> [Loaded<Root>]

    public func makeAsyncIterator() -> Iterator { Iterator(observation: self) }

    public struct Iterator: AsyncIteratorProtocol {
        let observation: IncludeObservation
        var observer: IncludeObserver?

        public mutating func next() async throws -> [Loaded<Root>]? {
            guard let observer else {
                guard case .store(let store) = observation.repository.context else {
                    throw DepotError(.invalidQuery, "observe the store's repository, not a transaction's")
                }
                // Registered before the first fetch, so no commit falls between the two.
                let registered = IncludeObserver(store: store, tables: observation.tables)
                self.observer = registered
                registered.signal.consume()
                return try await observation.fetch(observation.repository)
            }
            guard await observer.signal.wait() else { return nil }
            observer.signal.consume()  // commits so far are all covered by the fetch below
            return try await observation.fetch(observation.repository)
        }
    }
}

/// An include observation's place in its store's hub; released with the iterator.
final class IncludeObserver: Sendable {
    let hub: ObservationHub
    let signal = CommitSignal()

    init(store: any Store, tables: Set<String>) {
        hub = ObservationHub.hub(for: store)
        hub.register(signal, tables: tables)
    }

    deinit { hub.unregister(signal) }
}
