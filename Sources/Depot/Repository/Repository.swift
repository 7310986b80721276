/// Where a repository sends its calls: a store (each call its own transaction) or an open
/// transaction (each call a savepoint inside it).
enum RepositoryContext: Sendable {
    case store(any Store)
    case transaction(any StoreWriter)

    var reader: any StoreReader {
        switch self {
        case .store(let store): store
        case .transaction(let writer): writer
        }
    }

    /// Runs `body` atomically: all of its writes or none.
    func atomically<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        switch self {
        case .store(let store):
            try await StoreCall.$ownsTransaction.withValue(true) { try await store.transaction(body) }
        case .transaction(let writer): try await writer.savepoint(body)
        }
    }
}

/// Typed access to the stored values of one entity.
///
/// Get one from a store (`store.repository(Airport.self)`) or inside a transaction
/// (`tx.repository(Airport.self)`). Every call is atomic: a batch that fails halfway writes
/// nothing. Queries run inside the store; nothing is fetched to be filtered in Swift.
///
/// ```swift
/// let airports = store.repository(Airport.self)
/// try await airports.upsert(list)
/// let high = try await airports.fetch(where: \.country == "NO" && \.elevation > 500,
///                                     orderBy: [.descending(\.elevation)], limit: 20)
/// // SQLite:     SELECT … FROM "airports" WHERE ("country" = ?) AND ("elevation" > ?)
/// //             ORDER BY "elevation" DESC, "icao" LIMIT ?  -- 20, bound
/// // PostgreSQL: SELECT … FROM "airports" WHERE ("country" COLLATE "C" = $1) AND ("elevation" > $2)
/// //             ORDER BY "elevation" DESC NULLS LAST, "icao" COLLATE "C" ASC NULLS FIRST LIMIT $3
/// ```
///
/// ### Errors
///
/// Every call throws ``DepotError``. Besides the kinds each method lists, any call may throw:
/// - `.invalidSchema` when the entity's schema is declared wrongly (``Schema/validationError``),
///   or, for writes, removals and includes, its relations;
/// - `.schemaMismatch` when a stored table differs from the schema;
/// - `.decodingFailed` when a stored value does not fit its attribute;
/// - `.storage` or `.connection` when the engine fails;
/// - `.transaction` when the repository of a ``Transaction`` is used after its closure returned.
public struct Repository<Root: Entity>: Sendable {
    let context: RepositoryContext

    init(context: RepositoryContext) {
        self.context = context
    }

    var schema: Schema<Root> { Root.schema }

    /// Throws the schema's declaration problem, if it has one.
    func checkedSchema() throws -> Schema<Root> {
        let schema = Root.schema
        if let error = schema.validationError { throw error }
        return schema
    }

    func query(
        _ predicate: Filter<Root>?, _ ordering: [Ordering<Root>], limit: Int?, offset: Int?
    ) throws -> SelectQuery {
        SelectQuery(
            table: try checkedSchema().table, predicate: predicate?.node, ordering: ordering.map(\.term),
            limit: limit, offset: offset)
    }

    /// The predicate matching the row with primary key `key`.
    func keyPredicate(_ key: [StoredValue]) throws -> PredicateNode {
        let schema = try checkedSchema()
        guard key.count == schema.primaryKeyIndices.count else {
            throw DepotError(
                .invalidQuery,
                "\(Root.self) has a primary key of \(schema.primaryKeyIndices.count) column(s), "
                    + "got a key of \(key.count) value(s)",
                table: schema.tableName)
        }
        let parts = zip(schema.primaryKeyIndices, key).map { index, value in
            PredicateNode.compare(column: schema.columns[index].name, .equal, value)
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }
}

extension Store {
    /// The repository of `entity` on this store.
    public func repository<Root: Entity>(_ entity: Root.Type) -> Repository<Root> {
        Repository(context: .store(self))
    }

    /// Runs `body` in one transaction across any number of repositories: everything it writes
    /// commits together, or nothing if it throws.
    ///
    /// ```swift
    /// try await store.write { tx in
    ///     try await tx.repository(Country.self).upsert(norway)
    ///     try await tx.repository(Airport.self).replace(where: \.country == "NO", with: fresh)
    /// }
    /// ```
    /// Reads through `tx` see the transaction's own writes; reads through the store see only
    /// committed data. Do not keep `tx` after the closure returns: using it then throws.
    ///
    /// - Returns: What `body` returns, once the transaction has committed.
    /// - Throws: The error `body` throws (nothing is written), or a ``DepotError`` when the store
    ///   cannot run or commit the transaction (`.transaction`, `.storage`, `.connection`).
    public func write<T: Sendable>(_ body: @Sendable (Transaction) async throws -> T) async throws -> T {
        try await transaction { writer in try await body(Transaction(writer: writer)) }
    }
}

/// An open transaction, handed to the closure of `store.write { tx in … }`.
public struct Transaction: Sendable {
    let writer: SerializedWriter

    /// The transaction `writer` belongs to (for stores and migrations).
    package init(writer: any StoreWriter) {
        // A writer handed on (a migration step's transaction) keeps its queue.
        self.writer = writer as? SerializedWriter ?? SerializedWriter(writer)
    }

    /// The repository of `entity` inside this transaction; each of its calls is atomic on its own
    /// (a savepoint), and all commit together when the closure returns.
    public func repository<Root: Entity>(_ entity: Root.Type) -> Repository<Root> {
        Repository(context: .transaction(writer))
    }
}
