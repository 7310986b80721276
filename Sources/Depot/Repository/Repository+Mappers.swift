extension Repository {
    /// Upserts the entities `mapper` makes from `sources` (matched by primary key, last one wins).
    ///
    /// ```swift
    /// try await airports.persist(dtos, mapper: AirportDTOMapper())
    /// ```
    ///
    /// Every source is mapped before anything is written, so a mapping error writes nothing.
    ///
    /// - Throws: ``DepotError`` of kind `.mappingFailed` wrapping (as ``DepotError/underlying``)
    ///   an error the mapper throws (a ``DepotError`` it throws passes through as it is); then
    ///   what an upsert throws.
    public func persist<Mapper: PersistMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws where Mapper.Target == Root {
        let entities = try Self.mapping(sources, with: Mapper.self) { try mapper.entity(from: $0) }
        try await upsert(entities)
    }

    /// Merges `sources` into the stored entities with the same key through `mapper`, creating
    /// the missing ones; the existing rows are read in one query inside the same transaction.
    ///
    /// ```swift
    /// try await airports.persist(renames, mapper: AirportRenameMapper())  // see UpdateMapper
    /// ```
    ///
    /// Several sources with one key are applied in turn to the same entity. An empty `sources`
    /// does nothing, without checking anything.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when the entity's primary key has more
    ///   than one column; `.mappingFailed` wrapping an error the mapper throws (a ``DepotError``
    ///   it throws passes through); then what an upsert throws. Nothing is written on error.
    public func persist<Mapper: UpdateMapper>(
        _ sources: some Sequence<Mapper.Source>, mapper: Mapper
    ) async throws where Mapper.Target == Root, Mapper.Source: Sendable {
        let list = Array(sources)
        guard !list.isEmpty else { return }
        let schema = try checkedSchema()
        guard schema.primaryKeyIndices.count == 1 else {
            throw DepotError(
                .invalidQuery, "UpdateMapper needs a single-column primary key; \(Root.self) has a composite one",
                table: schema.tableName)
        }
        let keyColumn = schema.columns[schema.primaryKeyIndices[0]].name
        let keys = list.map { mapper.key(of: $0).storedValue }
        // Stored rows are read locked (`.updated`), so a concurrent persist waits and then merges
        // into this one's result. Keys not stored yet cannot be locked: they are inserted, and if
        // another transaction inserted one first, the whole call runs again (reading its row).
        for attempt in 1...Self.persistAttempts {
            do {
                try await persistOnce(list, keys: keys, keyColumn: keyColumn, mapper: mapper)
                return
            } catch let error as DepotError where error.kind == .constraintViolation && attempt < Self.persistAttempts {
                let query = SelectQuery(table: schema.table, predicate: .isIn(column: keyColumn, keys))
                guard try await context.reader.count(query) > 0 else { throw error }
            }
        }
    }

    /// How often ``persist(_:mapper:)`` with an ``UpdateMapper`` runs when other transactions
    /// keep inserting the keys it is about to insert.
    static var persistAttempts: Int { 5 }

    private func persistOnce<Mapper: UpdateMapper>(
        _ list: [Mapper.Source], keys: [StoredValue], keyColumn: String, mapper: Mapper
    ) async throws where Mapper.Target == Root, Mapper.Source: Sendable {
        let schema = try checkedSchema()
        try await context.atomically { writer in
            let inner = Repository(context: .transaction(writer))
            var query = SelectQuery(table: schema.table, predicate: .isIn(column: keyColumn, keys))
            query.lock = .updated
            let stored = try await writer.scan(query) { cursor in try schema.decodeAll(&cursor) }
            let storedKeys = Set(stored.map { schema.key(of: $0)[0] })
            var byKey: [StoredValue: Root] = [:]
            for entity in stored { byKey[schema.key(of: entity)[0]] = entity }
            var order: [StoredValue] = []
            for (source, key) in zip(list, keys) {
                do {
                    if var entity = byKey[key] {
                        try mapper.update(&entity, from: source)
                        byKey[key] = entity
                    } else {
                        byKey[key] = try mapper.makeEntity(from: source)
                    }
                } catch let error as DepotError {
                    throw error
                } catch {
                    throw DepotError(
                        .mappingFailed, "\(Mapper.self) failed for key \(TableDescription.describeKey([key]))",
                        table: schema.tableName, underlying: error)
                }
                order.append(key)
            }
            var seen: Set<StoredValue> = []
            let unique = order.filter { seen.insert($0).inserted }
            try await inner.upsert(unique.filter(storedKeys.contains).compactMap { byKey[$0] })
            try await inner.insert(unique.filter { !storedKeys.contains($0) }.compactMap { byKey[$0] })
        }
    }

    /// Maps every source, wrapping a mapper's own errors in a `.mappingFailed` error that names it.
    static func mapping<Source, Output>(
        _ sources: some Sequence<Source>, with mapper: Any.Type, _ transform: (Source) throws -> Output
    ) throws -> [Output] {
        try sources.map { source in
            do {
                return try transform(source)
            } catch let error as DepotError {
                throw error
            } catch {
                throw DepotError(
                    .mappingFailed, "\(mapper) could not map a \(Source.self) for \(Root.self)",
                    table: Root.schema.tableName, underlying: error)
            }
        }
    }

    /// A repository that hands out and accepts domain models through `mapper`.
    public func mapped<Mapper: DomainMapper>(by mapper: Mapper) -> MappedRepository<Mapper>
    where Mapper.Stored == Root {
        MappedRepository(base: self, mapper: mapper)
    }
}
