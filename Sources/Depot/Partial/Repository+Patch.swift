/// Turns a source model (typically a partial API response) into a ``Patch`` of the entity.
///
/// ```swift
/// struct UserDTOMapper: PatchMapper {
///     func patch(from dto: UserDTO) -> Patch<User> {
///         Patch(key: dto.id).set(\.name, dto.$name).set(\.isOnline, dto.$isOnline)
///     }
/// }
/// try await users.persist(dtos, mapper: UserDTOMapper())
/// ```
public protocol PatchMapper<Source, Target>: Sendable {
    /// The incoming value, typically a DTO with ``Field`` members.
    associatedtype Source
    /// The entity it patches.
    associatedtype Target: Entity
    /// The patch a source value makes.
    func patch(from source: Source) throws -> Patch<Target>
}

extension Repository {
    /// Applies partial updates: stored rows change only in the assigned columns; keys not stored
    /// are created when their patch assigns every required column.
    ///
    /// Patches for the same key in one call are merged in order, later assignments winning
    /// column by column. Rows assigning the same columns are written by one upsert statement,
    /// without reading them first. If any patch fails (a new row lacking required columns, `null`
    /// for a non-optional column), nothing of the call is written.
    ///
    /// ```swift
    /// try await airports.apply([
    ///     Patch(key: "ENGM").set(\.elevation, 208),
    ///     Patch(key: "ENBR").set(\.iata, dto.$iata),
    /// ])
    /// ```
    ///
    /// A group whose patches lack a required column is written as an `UPDATE` of the stored rows;
    /// when it updates fewer rows than it holds, one more query finds the key that is not stored.
    /// A row that holds a patch's values already is left alone: a call that changes nothing
    /// commits no change and wakes no observer.
    ///
    /// - Returns: How many rows were inserted or changed.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when a patch's key has the wrong number of
    ///   values or a patch sets `null` for a non-optional column; `.missingColumns` when a patch
    ///   for a key that is not stored lacks required columns (naming the key and the columns);
    ///   `.constraintViolation` when an assigned ``ToOne`` key names no stored row; and the kinds
    ///   every call may throw (see ``Repository``).
    @discardableResult
    public func apply(_ patches: some Sequence<Patch<Root>>) async throws -> Int {
        let schema = try checkedSchema()
        let keyWidth = schema.primaryKeyIndices.count
        // Merge patches of the same key, keeping first-seen order; one hash per patch.
        var merged: [Patch<Root>] = []
        var singlePositions: [StoredValue: Int] = [:]
        var compositePositions: [[StoredValue]: Int] = [:]
        let expected = patches.underestimatedCount
        merged.reserveCapacity(expected)
        if keyWidth == 1 {
            singlePositions.reserveCapacity(expected)
        } else {
            compositePositions.reserveCapacity(expected)
        }
        for patch in patches {
            guard patch.key.count == keyWidth else {
                throw DepotError(
                    .invalidQuery,
                    "a patch of \(Root.self) has a key of \(patch.key.count) value(s); the primary key has "
                        + "\(keyWidth) column(s)", table: schema.tableName)
            }
            let existing =
                keyWidth == 1
                ? singlePositions.updateValue(merged.count, forKey: patch.key[0])
                : compositePositions.updateValue(merged.count, forKey: patch.key)
            if let position = existing {
                merged[position] = merged[position].merged(with: patch)
                if keyWidth == 1 {
                    singlePositions[patch.key[0]] = position
                } else {
                    compositePositions[patch.key] = position
                }
            } else {
                merged.append(patch)
            }
        }
        if let bad = merged.first(where: { !$0.problems.isEmpty }), let problem = bad.problems.first {
            throw DepotError(
                problem.kind, "patch of \(Root.self) row \(TableDescription.describeKey(bad.key)): \(problem.message)",
                table: schema.tableName)
        }
        // One batch per set of assigned columns, in first-seen order. Patches built alike assign
        // in the same order: the previous patch's group is tried before sorting and hashing.
        var groups: [[Int]: Int] = [:]
        var batches: [(columns: [Int], members: [Int])] = []
        var previous: (assigned: [Int], group: Int)?
        for (position, patch) in merged.enumerated() {
            let assigned = patch.assignments.map(\.column)
            if let previous, previous.assigned == assigned {
                batches[previous.group].members.append(position)
                continue
            }
            let columns = assigned.filter { !schema.primaryKeyIndices.contains($0) }.sorted()
            let group: Int
            if let existing = groups[columns] {
                group = existing
                batches[group].members.append(position)
            } else {
                group = batches.count
                groups[columns] = group
                batches.append((columns, [position]))
            }
            previous = (assigned, group)
        }
        let required = schema.columns.indices.filter {
            !schema.columns[$0].isNullable && !schema.primaryKeyIndices.contains($0)
        }
        let planned = batches.map { columns, members -> (batch: RowBatch, lacking: [String]) in
            let all = schema.primaryKeyIndices + columns
            var values: [StoredValue] = []
            values.reserveCapacity(all.count * members.count)
            for position in members {
                let patch = merged[position]
                values += patch.key
                for column in columns {
                    values.append(patch.assignments.first { $0.column == column }?.value ?? .null)
                }
            }
            let lacking = required.filter { !columns.contains($0) }.map { schema.columns[$0].name }
            return (RowBatch(columns: all.map { schema.columns[$0].name }, values: values), lacking)
        }
        let table = schema.table
        return try await context.atomically { writer in
            var changed = 0
            for (batch, lacking) in planned {
                if lacking.isEmpty {
                    changed += try await write(batch, mode: .upsert, writer)
                } else {
                    // Every key must be stored already: an UPDATE of the assigned columns, and when it
                    // wrote fewer rows than the batch holds (or nothing, for key-only patches), the
                    // key that is missing fails the whole call.
                    // (Rows that hold the values already are not written either: then the keys
                    // are counted, and found.)
                    let written = try await write(batch, mode: .update, writer)
                    changed += written
                    if written < batch.count {
                        try await Self.requireStored(batch, lacking: lacking, table: table, writer: writer)
                    }
                }
            }
            return changed
        }
    }

    /// Fails, naming the missing columns, when a key of `batch` is not stored yet (the patch
    /// would create a row without its required columns). One count query per chunk of keys when
    /// all exist. (An update does not create rows, so this holds after it as before it.)
    private static func requireStored(
        _ batch: RowBatch, lacking: [String], table: TableDescription, writer: any StoreWriter
    ) async throws {
        let keyColumns = table.primaryKey
        let width = batch.columns.count
        let keys = (0..<batch.count).map { row in Array(batch.values[(row * width)..<(row * width + keyColumns.count)])
        }
        // Composite keys become one OR of ANDs: chunked, so no statement passes SQLite's
        // expression depth (1,000) or bound-parameter limits however large the batch.
        let chunkSize = keyColumns.count == 1 ? keys.count : compositeKeysPerQuery
        for start in stride(from: 0, to: keys.count, by: Swift.max(chunkSize, 1)) {
            let chunk = Array(keys[start..<Swift.min(start + chunkSize, keys.count)])
            let predicate = PredicateNode.matching(keys: chunk, primaryKey: keyColumns)
            let query = SelectQuery(table: table, predicate: predicate)
            if try await writer.count(query) == chunk.count { continue }
            let indices = table.primaryKeyIndices
            let stored = Set(try await writer.fetch(query) { row in indices.map { row[$0] } })
            if let missing = chunk.first(where: { !stored.contains($0) }) {
                throw DepotError(
                    .missingColumns,
                    "\(table.entityName) row \(TableDescription.describeKey(missing)) is not stored, and its patch "
                        + "lacks required column(s) " + lacking.joined(separator: ", "),
                    table: table.name, column: lacking.first)
            }
        }
    }

    /// Composite keys per existence query (an OR of that many ANDs).
    static var compositeKeysPerQuery: Int { 200 }

    /// Applies the patches `mapper` makes from `sources` (see ``apply(_:)``).
    ///
    /// ```swift
    /// try await users.persist(dtos, mapper: UserDTOMapper())
    /// ```
    ///
    /// Every source is mapped before anything is written.
    ///
    /// - Returns: How many rows were inserted or changed.
    /// - Throws: ``DepotError`` of kind `.mappingFailed` wrapping an error the mapper throws (a
    ///   ``DepotError`` it throws passes through as it is); then what ``apply(_:)`` throws.
    @discardableResult
    public func persist<Mapper: PatchMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws -> Int where Mapper.Target == Root {
        try await apply(Self.mapping(sources, with: Mapper.self) { try mapper.patch(from: $0) })
    }
}
