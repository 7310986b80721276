extension Repository {
    /// Upserts the entities `mapper` makes from `sources` (matched by primary key, last one wins).
    ///
    /// ```swift
    /// try await airports.persist(dtos, mapper: AirportDTOMapper())
    /// ```
    ///
    /// Every source is mapped before anything is written, so a mapping error writes nothing.
    ///
    /// - Returns: The entities as stored, one per source, in the order of `sources` (for a key
    ///   that appears twice, the last one, which is what the store holds).
    /// - Throws: ``DepotError`` of kind `.mappingFailed` wrapping (as ``DepotError/underlying``)
    ///   an error the mapper throws (a ``DepotError`` it throws passes through as it is); then
    ///   what an upsert throws.
    @discardableResult
    public func persist<Mapper: PersistMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws -> [Root] where Mapper.Target == Root {
        let entities = try Self.mapping(sources, with: Mapper.self) { try mapper.entity(from: $0) }
        try await upsert(entities)
        let schema = try checkedSchema()
        var last: [[StoredValue]: Root] = [:]
        for entity in entities { last[schema.key(of: entity)] = entity }
        return entities.map { last[schema.key(of: $0)] ?? $0 }
    }

    /// Merges `sources` into the stored entities they match through `mapper` (see ``Match``),
    /// creating the missing ones, with the related sources its ``UpdateMapper/nested`` names; the
    /// matched rows are read in one query per table inside the same transaction.
    ///
    /// ```swift
    /// let stored = try await users.persist(responses, mapper: UserResponseMapper())  // [UserEntity]
    /// ```
    ///
    /// Several sources matching one row are applied in turn to the same entity. An empty
    /// `sources` does nothing, without checking anything.
    ///
    /// - Returns: The entities as stored, one per source, in the order of `sources` (a row
    ///   matched twice appears twice, as it ended).
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when the mapper's match names columns that
    ///   are neither the primary key nor a unique constraint; `.mappingFailed` wrapping an error the
    ///   mapper throws (a ``DepotError`` it throws passes through), or when an entity it made or
    ///   updated does not hold the source's matched values or changed its primary key; then what
    ///   an upsert throws. Nothing is written on error.
    @discardableResult
    public func persist<Mapper: UpdateMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws -> [Root] where Mapper.Target == Root, Mapper.Source: Sendable {
        let list = Array(sources)
        guard !list.isEmpty else { return [] }
        // Stored rows are read locked (`.updated`), so a concurrent persist waits and then merges
        // into this one's result. Rows not stored yet cannot be locked: they are inserted, and if
        // another transaction inserted one first, the whole call runs again (reading its row).
        var attempt = 1
        while true {
            let inserted = InsertedRows()
            do {
                return try await context.atomically { writer in
                    try await Repository(context: .transaction(writer)).merge(
                        list, mapper: mapper, overrides: nil, writer, inserted)
                }
            } catch let error as DepotError where error.kind == .constraintViolation && attempt < Self.persistAttempts {
                guard try await inserted.anyStoredNow(context.reader) else { throw error }
                attempt += 1
            }
        }
    }

    /// How often ``persist(_:mapper:)`` with an ``UpdateMapper`` runs when other transactions
    /// keep inserting the rows it is about to insert.
    static var persistAttempts: Int { 5 }

    /// The body of a persist through an ``UpdateMapper``, inside `writer`: related rows the
    /// mapper nests before (to-one) and after (to-many), `overrides` set per source (the key and
    /// position a parent gives its children).
    func merge<Mapper: UpdateMapper>(
        _ list: [Mapper.Source], mapper: Mapper, overrides: [[(column: Int, value: StoredValue)]]?,
        _ writer: any StoreWriter, _ inserted: InsertedRows
    ) async throws -> [Root] where Mapper.Target == Root, Mapper.Source: Sendable {
        let schema = try checkedSchema()
        let matched = try mapper.match.columns(in: schema, mapper: Mapper.self)
        let keys = list.map(mapper.match.sourceValues)
        var overrides = overrides ?? Array(repeating: [], count: list.count)
        for nested in mapper.nested {
            guard case .beforeParents(let column) = nested.phase else { continue }
            let index = try schema.table.requireColumn(column)
            for (row, key) in try await nested.run(list, [], writer, inserted).enumerated() {
                if let key { overrides[row].append((index, key)) }
            }
        }
        // Read the rows the sources match (a superset for a composite match), locked.
        let names = matched.map { schema.columns[$0].name }
        let predicate = PredicateNode.and(
            names.indices.map { column in
                .isIn(column: names[column], Array(Set(keys.map { $0[column] }).subtracting([.null])))
            })
        var query = SelectQuery(table: schema.table, predicate: predicate)
        query.lock = .updated
        let anyMatchable = keys.contains { !$0.contains(.null) }
        let stored = anyMatchable ? try await writer.scan(query) { cursor in try schema.decodeAll(&cursor) } : []
        var byMatch: [[StoredValue]: Root] = [:]
        var storedKeys: Set<[StoredValue]> = []
        for entity in stored {
            let values = schema.values(of: entity)
            byMatch[matched.map { values[$0] }] = entity
            storedKeys.insert(schema.key(of: entity))
        }
        var results: [Root] = []
        results.reserveCapacity(list.count)
        var resultMatch: [[StoredValue]?] = []
        for (row, source) in list.enumerated() {
            let key = keys[row]
            let mergeable = !key.contains(.null)
            let existing = mergeable ? byMatch[key] : nil
            var entity: Root
            do {
                if var updated = existing {
                    try mapper.update(&updated, from: source)
                    entity = updated
                } else {
                    entity = try mapper.makeEntity(from: source)
                }
            } catch let error as DepotError {
                throw error
            } catch {
                throw DepotError(
                    .mappingFailed, "\(Mapper.self) failed for \(TableDescription.describeKey(key))",
                    table: schema.tableName, underlying: error)
            }
            var values = schema.values(of: entity)
            if !overrides[row].isEmpty {
                for (column, value) in overrides[row] { values[column] = value }
                entity = try schema.decode(values)
            }
            let made = matched.map { values[$0] }
            let problem: String? =
                made != key
                ? "made a row whose \(names.joined(separator: ", ")) \(TableDescription.describeKey(made)) is not the source's \(TableDescription.describeKey(key))"
                : existing.map { schema.key(of: $0) != schema.key(of: entity) } == true
                    ? "changed the primary key of the stored row \(TableDescription.describeKey(key))" : nil
            if let problem {
                throw DepotError(.mappingFailed, "\(Mapper.self) \(problem)", table: schema.tableName)
            }
            if mergeable { byMatch[key] = entity }
            results.append(entity)
            resultMatch.append(mergeable ? key : nil)
        }
        // The last state of every row, once: stored rows are upserted, new ones inserted.
        var seen: Set<[StoredValue]> = []
        var updates: [Root] = []
        var inserts: [Root] = []
        for (row, key) in resultMatch.enumerated().reversed() {
            if let key {
                guard seen.insert(key).inserted, let entity = byMatch[key] else { continue }
                if storedKeys.contains(schema.key(of: entity)) {
                    updates.append(entity)
                } else {
                    inserts.append(entity)
                }
            } else {
                inserts.append(results[row])
            }
        }
        for row in results.indices {
            if let key = resultMatch[row], let entity = byMatch[key] { results[row] = entity }
        }
        if !updates.isEmpty {
            _ = try await write(batch(of: updates.reversed(), duplicates: .reject), mode: .upsert, writer)
        }
        if !inserts.isEmpty {
            let batch = try batch(of: inserts.reversed(), duplicates: .reject)
            let newKeys = inserts.map { entity in matched.map { schema.values(of: entity)[$0] } }
            inserted.record(
                SelectQuery(
                    table: schema.table,
                    predicate: .and(
                        names.indices.map { column in .isIn(column: names[column], newKeys.map { $0[column] }) })))
            _ = try await write(batch, mode: .insert, writer)
        }
        let parentKeys = results.map { schema.key(of: $0).first ?? .null }
        for nested in mapper.nested where nested.phase == .afterParents {
            _ = try await nested.run(list, parentKeys, writer, inserted)
        }
        return results
    }

    /// Maps every source, wrapping a mapper's own errors in a `.mappingFailed` error that names it.
    static func mapping<Source, Output>(
        _ sources: some Sequence<Source>, with mapper: Any.Type, _ transform: (Source) throws -> Output
    ) throws -> [Output] {
        try mappingFailures(sources, transform) { error in
            DepotError(
                .mappingFailed, "\(mapper) could not map a \(Source.self) for \(Root.self)",
                table: Root.schema.tableName, underlying: error)
        }
    }

    /// A repository that hands out and accepts domain models through `mapper`.
    public func mapped<Mapper: DomainMapper>(by mapper: Mapper) -> MappedRepository<Mapper>
    where Mapper.Stored == Root {
        MappedRepository(base: self, mapper: mapper)
    }
}
