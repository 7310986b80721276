extension Repository {
    /// Stores new entities; fails if any key is already stored or appears twice in `entities`,
    /// and then writes none of them.
    ///
    /// ```swift
    /// try await airports.insert([oslo, bergen])
    /// // SQLite:     INSERT INTO "airports" ("icao", …) VALUES (?, …)  -- prepared once, run per row
    /// // PostgreSQL: INSERT INTO "airports" ("icao", …)
    /// //             SELECT * FROM UNNEST(CAST($1 AS text[]), …)    -- one array per column
    /// //             (500 rows or more: COPY "airports" (…) FROM STDIN)
    /// ```
    ///
    /// The table is created if it does not exist yet. Each ``ToOne`` key the entities hold must
    /// name a stored row (or a row of the same call, for a key to its own table).
    ///
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when a key is already stored or
    ///   appears twice in `entities`, a ``ToOne`` key names no stored row, or a unique index
    ///   rejects a row; and the kinds every call may throw (see ``Repository``).
    public func insert(_ entities: some Sequence<Root>) async throws {
        let batch = try batch(of: entities, duplicates: .reject)
        guard batch.count > 0 else { return }
        try await context.atomically { writer in _ = try await write(batch, mode: .insert, writer) }
    }

    /// Stores a new entity; fails if its key is already stored.
    ///
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when the key is already stored, a
    ///   ``ToOne`` key names no stored row, or a unique index rejects the row; and the kinds every
    ///   call may throw (see ``Repository``).
    public func insert(_ entity: Root) async throws {
        try await insert(CollectionOfOne(entity))
    }

    /// Inserts entities or replaces the stored ones with the same primary key.
    ///
    /// When a key appears more than once in `entities`, the last one wins.
    ///
    /// ```swift
    /// try await airports.upsert(list)
    /// // SQLite:     INSERT INTO "airports" ("icao", …) VALUES (?, …)
    /// //             ON CONFLICT ("icao") DO UPDATE SET "iata" = excluded."iata", …
    /// //             WHERE "airports"."iata" IS NOT excluded."iata" OR …
    /// // PostgreSQL: INSERT INTO "airports" ("icao", …) SELECT * FROM UNNEST(CAST($1 AS text[]), …)
    /// //             ON CONFLICT ("icao") DO UPDATE SET "iata" = excluded."iata", …
    /// //             WHERE "airports"."iata" IS DISTINCT FROM excluded."iata" OR …
    /// //             (500 rows or more: COPY into a temporary table, then the same from it)
    /// ```
    ///
    /// A stored row that holds the same values already is left alone: it is not counted, and
    /// when no row changed the call writes nothing and announces nothing (observers stay asleep).
    ///
    /// - Returns: How many rows were inserted or changed.
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when a ``ToOne`` key names no
    ///   stored row or a unique index rejects a row; and the kinds every call may throw (see
    ///   ``Repository``).
    @discardableResult
    public func upsert(_ entities: some Sequence<Root>) async throws -> Int {
        let batch = try batch(of: entities, duplicates: .keepLast)
        guard batch.count > 0 else { return 0 }
        return try await context.atomically { writer in try await write(batch, mode: .upsert, writer) }
    }

    /// Inserts `entity` or replaces the stored one with the same primary key.
    ///
    /// ```swift
    /// try await airports.upsert(oslo)
    /// ```
    ///
    /// - Returns: Whether the row was inserted or changed (`false`: it held these values already).
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when a ``ToOne`` key names no
    ///   stored row or a unique index rejects the row; and the kinds every call may throw (see
    ///   ``Repository``).
    @discardableResult
    public func upsert(_ entity: Root) async throws -> Bool {
        try await upsert(CollectionOfOne(entity)) > 0
    }

    /// Removes the entities matching `predicate`; returns how many were removed.
    ///
    /// ```swift
    /// let removed = try await airports.remove(where: \.elevation < -100)
    /// // SQLite:     DELETE FROM "airports" WHERE "elevation" < ?
    /// // PostgreSQL: DELETE FROM "airports" WHERE "elevation" < $1
    /// ```
    ///
    /// When other entities' ``ToOne`` keys reference this entity, the matching keys are read
    /// first, each relation's ``DeleteRule`` is applied to the rows referencing them, and the rows
    /// are then deleted by key, all in one transaction.
    ///
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when a `.deny` rule finds rows
    ///   referencing one being removed (nothing is removed); and the kinds every call may throw
    ///   (see ``Repository``).
    @discardableResult
    public func remove(where predicate: Filter<Root>) async throws -> Int {
        let node = predicate.node
        return try await context.atomically { writer in try await delete(where: node, writer) }
    }

    /// Removes the entity with primary key `key`; returns whether one was stored.
    ///
    /// ```swift
    /// try await airports.remove("ENGM")
    /// ```
    ///
    /// Delete rules apply as for ``remove(where:)``.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when the primary key has more than one
    ///   column, `.constraintViolation` when a `.deny` rule finds referencing rows; and the
    ///   kinds every call may throw (see ``Repository``).
    @discardableResult
    public func remove<Key: StorableValue>(_ key: Key) async throws -> Bool {
        try await remove(keyValues: [key.storedValue])
    }

    /// Removes the entity with the two-column primary key (`first`, `second`); returns whether
    /// one was stored.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` when the primary key does not have exactly
    ///   two columns, `.constraintViolation` when a `.deny` rule finds referencing rows; and the
    ///   kinds every call may throw (see ``Repository``).
    @discardableResult
    public func remove<First: StorableValue, Second: StorableValue>(_ first: First, _ second: Second) async throws
        -> Bool
    {
        try await remove(keyValues: [first.storedValue, second.storedValue])
    }

    func remove(keyValues: [StoredValue]) async throws -> Bool {
        let node = try keyPredicate(keyValues)
        return try await context.atomically { writer in try await delete(where: node, writer) } > 0
    }

    /// Removes every entity; returns how many were removed (`DELETE FROM "airports"`).
    ///
    /// Delete rules apply as for ``remove(where:)``.
    ///
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when a `.deny` rule finds
    ///   referencing rows; and the kinds every call may throw (see ``Repository``).
    @discardableResult
    public func removeAll() async throws -> Int {
        try await context.atomically { writer in try await delete(where: nil, writer) }
    }

    /// Removes the entities matching `predicate` and stores `entities`, in one transaction.
    ///
    /// What the seed repositories call "clear before saving": readers see the old set or the
    /// new one, never a mix. Stored entities outside `predicate` whose key is in `entities` are
    /// replaced too (the new set is upserted).
    ///
    /// ```swift
    /// try await airports.replace(where: \.country == "NO", with: fresh)
    /// ```
    ///
    /// When other entities reference this one (and its primary key is one column), rows whose key
    /// is in `entities` are updated in place rather than removed, so delete rules apply only to the
    /// rows that go.
    ///
    /// - Throws: ``DepotError`` of kind `.constraintViolation` when a `.deny` rule finds rows
    ///   referencing one that goes, a ``ToOne`` key names no stored row, or a unique index rejects
    ///   a row (nothing is written); and the kinds every call may throw (see ``Repository``).
    public func replace(where predicate: Filter<Root>, with entities: some Sequence<Root>) async throws {
        let batch = try batch(of: entities, duplicates: .keepLast)
        let schema = try checkedSchema()
        var node = predicate.node
        let keyIndices = schema.primaryKeyIndices
        if !RelationDescriptor.dependents(of: EntityType(Root.self)).isEmpty, keyIndices.count == 1, batch.count > 0 {
            // Rows that stay (their key is in the new set) are updated, not removed: delete rules
            // apply only to the rows that go.
            let keys = (0..<batch.count).map { batch.values[$0 * batch.columns.count + keyIndices[0]] }
            node = .and([node, .not(.isIn(column: schema.columns[keyIndices[0]].name, keys))])
        }
        try await context.atomically { [node] writer in
            _ = try await delete(where: node, writer)
            if batch.count > 0 { try await write(batch, mode: .upsert, writer) }
        }
    }

    /// Encodes entities into a row batch, handling keys that appear twice.
    func batch(of entities: some Sequence<Root>, duplicates: DuplicateKeys) throws -> RowBatch {
        let schema = try checkedSchema()
        var values: [StoredValue] = []
        values.reserveCapacity(entities.underestimatedCount * schema.columns.count)
        var count = 0
        if schema.encodingChecks.isEmpty {
            for entity in entities {
                schema.appendValues(of: entity, to: &values)
                count += 1
            }
        } else {
            for entity in entities {
                let start = values.count
                schema.appendValues(of: entity, to: &values)
                try schema.checkEncoded(entity, values: values[start...])
                count += 1
            }
        }
        if values.count != count * schema.columns.count {
            throw DepotError(
                .invalidSchema,
                "the row codec of \(schema.table.entityName) (table '\(schema.tableName)') wrote "
                    + "\(values.count) values for \(count) rows of \(schema.columns.count) columns",
                table: schema.tableName)
        }
        var batch = RowBatch(columns: schema.columns.map(\.name), values: values)
        try RowDeduplication.deduplicate(
            &batch, keyIndices: schema.primaryKeyIndices, table: schema.tableName, duplicates)
        return batch
    }
}

/// How a batch treats a key that appears more than once.
enum DuplicateKeys { case reject, keepLast }

/// Duplicate keys in a batch. Outside the generic `Repository`, so that the hashing loop is
/// compiled for `StoredValue` keys instead of running generically (a metadata lookup per row).
enum RowDeduplication {
    /// Drops earlier rows whose key appears again later (or throws, when rejecting duplicates).
    static func deduplicate(
        _ batch: inout RowBatch, keyIndices: [Int], table: String, _ duplicates: DuplicateKeys
    ) throws {
        guard batch.count > 1 else { return }
        let width = batch.columns.count
        let values = batch.values
        // A single-column key hashes the value itself (as an integer when it is one), not a
        // one-element array per row.
        if keyIndices.count == 1 {
            let keyIndex = keyIndices[0]
            var lastRow = KeyPositions(capacity: batch.count)
            try deduplicate(&batch, table: table, duplicates) {
                [values[$0 * width + keyIndex]]
            } record: {
                lastRow.updateValue($0, forKey: values[$0 * width + keyIndex])
            } last: {
                lastRow[values[$0 * width + keyIndex]]
            }
        } else {
            let key = { (row: Int) in keyIndices.map { values[row * width + $0] } }
            var lastRow: [[StoredValue]: Int] = Dictionary(minimumCapacity: batch.count)
            try deduplicate(&batch, table: table, duplicates, key: key) {
                lastRow.updateValue($0, forKey: key($0))
            } last: {
                lastRow[key($0)]
            }
        }
    }

    /// The shared pass: `record` stores a row as the last of its key and returns the row it
    /// replaces; `last` gives the last row of a row's key; `key` spells it for the error message.
    private static func deduplicate(
        _ batch: inout RowBatch, table: String, _ duplicates: DuplicateKeys, key: (Int) -> [StoredValue],
        record: (Int) -> Int?, last: (Int) -> Int?
    ) throws {
        let width = batch.columns.count
        var repeated = 0
        for row in 0..<batch.count where record(row) != nil {
            if duplicates == .reject {
                throw DepotError(
                    .constraintViolation,
                    "\(table): key \(TableDescription.describeKey(key(row))) appears twice in one insert", table: table)
            }
            repeated += 1
        }
        guard repeated > 0 else { return }
        var kept: [StoredValue] = []
        kept.reserveCapacity((batch.count - repeated) * width)
        for row in 0..<batch.count where last(row) == row {
            kept.append(contentsOf: batch.values[(row * width)..<((row + 1) * width)])
        }
        batch.values = kept
    }
}
