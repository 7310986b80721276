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
    associatedtype Source
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
    public func apply(_ patches: some Sequence<Patch<Root>>) async throws {
        let schema = try checkedSchema()
        var merged: [[StoredValue]: Patch<Root>] = [:]
        var order: [[StoredValue]] = []
        for patch in patches {
            guard patch.key.count == schema.primaryKeyIndices.count else {
                throw DepotError(
                    .invalidQuery,
                    "a patch of \(Root.self) has a key of \(patch.key.count) value(s); the primary key has "
                        + "\(schema.primaryKeyIndices.count) column(s)", table: schema.tableName)
            }
            if let earlier = merged[patch.key] {
                merged[patch.key] = earlier.merged(with: patch)
            } else {
                merged[patch.key] = patch
                order.append(patch.key)
            }
        }
        for key in order {
            if let problem = merged[key]?.problems.first {
                throw DepotError(
                    .invalidQuery, "patch of \(Root.self) row \(TableDescription.describeKey(key)): \(problem)",
                    table: schema.tableName)
            }
        }
        // One batch per set of assigned columns, in first-seen order.
        var groups: [[Int]: [[StoredValue]]] = [:]
        var groupOrder: [[Int]] = []
        for key in order {
            guard let patch = merged[key] else { continue }
            let assigned = patch.assignments.sorted { $0.column < $1.column }
            let columns = assigned.map(\.column).filter { !schema.primaryKeyIndices.contains($0) }
            if groups[columns] == nil { groupOrder.append(columns) }
            groups[columns, default: []].append(key)
        }
        let required = schema.columns.indices.filter {
            !schema.columns[$0].isNullable && !schema.primaryKeyIndices.contains($0)
        }
        var batches: [(columns: [Int], batch: RowBatch, lacking: [Int])] = []
        for columns in groupOrder {
            guard let keys = groups[columns] else { continue }
            let all = schema.primaryKeyIndices + columns
            var values: [StoredValue] = []
            values.reserveCapacity(all.count * keys.count)
            for key in keys {
                guard let patch = merged[key] else { continue }
                values += key
                for column in columns {
                    values.append(patch.assignments.first { $0.column == column }?.value ?? .null)
                }
            }
            let batch = RowBatch(columns: all.map { schema.columns[$0].name }, values: values)
            batches.append((columns, batch, required.filter { !columns.contains($0) }))
        }
        let table = schema.table
        let keyColumns = schema.primaryKeyIndices.map { schema.columns[$0].name }
        let planned = batches
        try await context.atomically { writer in
            for (_, batch, lacking) in planned {
                if lacking.isEmpty {
                    try await writer.write(batch, into: table, mode: .upsert)
                } else {
                    // Every key must be stored already: then an UPDATE of the assigned columns.
                    try await Self.requireStored(
                        batch, keyColumns: keyColumns, lacking: lacking.map { schema.columns[$0].name }, table: table,
                        writer: writer)
                    if batch.columns.count > keyColumns.count {
                        try await writer.write(batch, into: table, mode: .update)
                    }
                }
            }
        }
    }

    /// Fails, naming the missing columns, when a key of `batch` is not stored yet (the patch
    /// would create a row without its required columns). One query for the whole batch.
    private static func requireStored(
        _ batch: RowBatch, keyColumns: [String], lacking: [String], table: TableDescription, writer: any StoreWriter
    ) async throws {
        let width = batch.columns.count
        let keys = (0..<batch.count).map { row in Array(batch.values[(row * width)..<(row * width + keyColumns.count)])
        }
        let predicate: PredicateNode
        if keyColumns.count == 1 {
            predicate = .isIn(column: keyColumns[0], keys.map { $0[0] })
        } else {
            predicate = .or(
                keys.map { key in .and(zip(keyColumns, key).map { .compare(column: $0, .equal, $1) }) })
        }
        let indices = table.primaryKeyIndices
        let stored = try await writer.fetch(SelectQuery(table: table, predicate: predicate)) { row in
            indices.map { row[$0] }
        }
        let existing = Set(stored)
        if let missing = keys.first(where: { !existing.contains($0) }) {
            throw DepotError(
                .missingColumns,
                "\(table.entityName) row \(TableDescription.describeKey(missing)) is not stored, and its patch lacks "
                    + "required column(s) " + lacking.joined(separator: ", "),
                table: table.name, column: lacking.first)
        }
    }

    /// Applies the patches `mapper` makes from `sources` (see ``apply(_:)``).
    public func persist<Mapper: PatchMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws where Mapper.Target == Root {
        try await apply(Self.mapping(sources, with: Mapper.self) { try mapper.patch(from: $0) })
    }
}
