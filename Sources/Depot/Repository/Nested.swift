import Synchronization

/// A related value inside a source that an ``UpdateMapper`` stores with it, through the related
/// entity's own mapper, in the same transaction and one batch per table.
///
/// ```swift
/// struct UserResponseMapper: UpdateMapper {
///     var match: Match<UserResponse, UserEntity> { Match(\.identifier, \.remoteID) }
///     var nested: [Nested<UserResponse, UserEntity>] {
///         [.toOne(\.image, in: UserEntity.image, mapper: ImageResponseMapper()),
///          .toMany(\.posts, in: UserEntity.posts, mapper: PostResponseMapper())]
///     }
///     …
/// }
/// ```
///
/// - A to-one value is stored first; the entity's key column is then set to its key (a source
///   whose value is `nil` leaves the column as the mapper set it).
/// - A to-many list is stored after the entities, each child's key column set to its parent's key
///   (and, in an ordered relation, positions 1, 2, 3, … in the list's order). Stored children of
///   those parents missing from the lists are handled by `replaced` (removed by default, with
///   their own delete rules). When two sources match one parent, the later one's list counts.
public struct Nested<Source: Sendable, Target: Entity>: Sendable {
    enum Phase: Equatable {
        /// Stored before the parents; the parents' `column` holds the returned keys.
        case beforeParents(column: String)
        /// Stored after the parents, given their keys.
        case afterParents
    }

    let phase: Phase
    /// Stores the related values of `sources` (given the parents' keys, after them); returns
    /// the key to set in each source's parent (before them).
    let run: @Sendable ([Source], [StoredValue], any StoreWriter, InsertedRows) async throws -> [StoredValue?]

    /// The optional to-one value at `value`, stored through `mapper` and referenced by `relation`.
    public static func toOne<Mapper: UpdateMapper>(
        _ value: KeyPath<Source, Mapper.Source?>, in relation: ToOne<Target, Mapper.Target>, mapper: Mapper
    ) -> Nested where Mapper.Source: Sendable {
        let box = TypedKeyPathBox(keyPath: value)
        return toOne(relation, mapper: mapper) { $0[keyPath: box.keyPath] }
    }

    /// The to-one value at `value`, stored through `mapper` and referenced by `relation`.
    public static func toOne<Mapper: UpdateMapper>(
        _ value: KeyPath<Source, Mapper.Source>, in relation: ToOne<Target, Mapper.Target>, mapper: Mapper
    ) -> Nested where Mapper.Source: Sendable {
        let box = TypedKeyPathBox(keyPath: value)
        return toOne(relation, mapper: mapper) { $0[keyPath: box.keyPath] }
    }

    private static func toOne<Mapper: UpdateMapper>(
        _ relation: ToOne<Target, Mapper.Target>, mapper: Mapper,
        _ value: @escaping @Sendable (Source) -> Mapper.Source?
    ) -> Nested where Mapper.Source: Sendable {
        Nested(phase: .beforeParents(column: relation.column)) { sources, _, writer, inserted in
            var rows: [Int] = []
            var related: [Mapper.Source] = []
            for (row, source) in sources.enumerated() {
                if let item = value(source) {
                    rows.append(row)
                    related.append(item)
                }
            }
            var keys = [StoredValue?](repeating: nil, count: sources.count)
            guard !related.isEmpty else { return keys }
            let stored = try await Repository<Mapper.Target>(context: .transaction(writer)).merge(
                related, mapper: mapper, overrides: nil, writer, inserted)
            for (row, entity) in zip(rows, stored) { keys[row] = Mapper.Target.schema.key(of: entity).first }
            return keys
        }
    }

    /// The optional to-one value at `value`, made into an entity by `mapper` and upserted by its
    /// primary key (a key appearing twice keeps the last), then referenced by `relation`.
    public static func toOne<Mapper: PersistMapper>(
        _ value: KeyPath<Source, Mapper.Source?>, in relation: ToOne<Target, Mapper.Target>, mapper: Mapper
    ) -> Nested where Mapper.Source: Sendable {
        let box = TypedKeyPathBox(keyPath: value)
        return Nested(phase: .beforeParents(column: relation.column)) { sources, _, writer, _ in
            let related = Repository<Mapper.Target>(context: .transaction(writer))
            let items = sources.map { $0[keyPath: box.keyPath] }
            let present = try Repository<Mapper.Target>.mapping(items.compactMap { $0 }, with: Mapper.self) {
                try mapper.entity(from: $0)
            }
            guard !present.isEmpty else { return items.map { _ in nil } }
            _ = try await related.write(related.batch(of: present, duplicates: .keepLast), mode: .upsert, writer)
            var keys = present.lazy.map { Mapper.Target.schema.key(of: $0).first }.makeIterator()
            return items.map { $0 == nil ? nil : keys.next() ?? nil }
        }
    }

    /// The list at `values`, stored through `mapper` as the entity's children in `relation`.
    public static func toMany<Mapper: UpdateMapper>(
        _ values: KeyPath<Source, [Mapper.Source]>, in relation: ToMany<Target, Mapper.Target>, mapper: Mapper,
        replaced: ReplacedChildren = .remove
    ) -> Nested where Mapper.Source: Sendable {
        let box = TypedKeyPathBox(keyPath: values)
        return Nested(phase: .afterParents) { sources, parentKeys, writer, inserted in
            let children = Repository<Mapper.Target>(context: .transaction(writer))
            let schema = try children.checkedSchema()
            let keyName = relation.descriptor.foreignKey.column
            let keyColumn = try schema.table.requireColumn(keyName)
            let positionColumn = try relation.descriptor.positionColumn.map { try schema.table.requireColumn($0) }
            try replaced.check(relation.descriptor, in: schema.table, saving: Mapper.Target.self)
            var lastRow: [StoredValue: Int] = [:]
            for (row, key) in parentKeys.enumerated() { lastRow[key] = row }
            var list: [Mapper.Source] = []
            var overrides: [[(column: Int, value: StoredValue)]] = []
            for (row, source) in sources.enumerated() where lastRow[parentKeys[row]] == row {
                for (offset, child) in source[keyPath: box.keyPath].enumerated() {
                    list.append(child)
                    var set = [(column: keyColumn, value: parentKeys[row])]
                    if let positionColumn { set.append((positionColumn, .double(Double(offset + 1)))) }
                    overrides.append(set)
                }
            }
            let stored =
                list.isEmpty
                ? [] : try await children.merge(list, mapper: mapper, overrides: overrides, writer, inserted)
            var others = PredicateNode.isIn(column: keyName, Array(lastRow.keys))
            if !stored.isEmpty, let primaryKey = schema.table.primaryKey.first {
                others = .and([others, .not(.isIn(column: primaryKey, stored.compactMap { schema.key(of: $0).first }))])
            }
            try await replaced.apply(to: others, of: relation.descriptor, in: children, writer)
            return []
        }
    }
}

/// The rows a persist inserted, one query per table: when the insert fails on a key another
/// transaction stored first, a new attempt reads that row instead.
final class InsertedRows: Sendable {
    private let queries = Mutex<[SelectQuery]>([])

    func record(_ query: SelectQuery) { queries.withLock { $0.append(query) } }

    /// Whether another transaction has stored one of the inserted rows by now.
    func anyStoredNow(_ reader: any StoreReader) async throws -> Bool {
        for query in queries.withLock({ $0 }) where try await reader.count(query) > 0 { return true }
        return false
    }
}
