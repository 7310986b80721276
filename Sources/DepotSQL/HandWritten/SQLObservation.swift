import Depot

extension SQLRunning where Self: Store {
    /// The result of a hand-written statement, now and again after every commit to a table it
    /// reads: the tables its ``SQL/StringInterpolation/appendInterpolation(table:)``
    /// interpolations name, and `tables`.
    ///
    /// ```swift
    /// for try await high in store.observe(
    ///     sql: "SELECT * FROM \(table: Airport.self) WHERE \(column: \Airport.elevation) > \(5_000)", as: Airport.self)
    /// {
    ///     show(high)
    /// }
    /// ```
    ///
    /// Each element is a fresh run (no diff); commits made while the consumer is busy coalesce into
    /// the next one. A statement that names no table is run once and then only when the
    /// sequence is iterated anew. Errors surface from the loop: what ``SQLRunning/sql(_:as:)``
    /// throws.
    public func observe<Root: Entity>(
        sql statement: SQL, as entity: Root.Type, tables: [any Entity.Type] = []
    ) -> SQLObservation<[Root]> {
        SQLObservation(store: self, tables: statement.tables.union(tables.map { $0.schemaTableName })) { store in
            try await store.sql(statement, as: entity)
        }
    }

    /// The rows of a hand-written statement decoded by column name, now and again after every
    /// commit to a table it reads (see ``SQLRunning/observe(sql:as:tables:)``).
    public func observe<Row: Decodable & Sendable>(
        sql statement: SQL, decoding type: Row.Type, tables: [any Entity.Type] = []
    ) -> SQLObservation<[Row]> {
        SQLObservation(store: self, tables: statement.tables.union(tables.map { $0.schemaTableName })) { store in
            try await store.sql(statement, decoding: type)
        }
    }
}

extension Entity {
    fileprivate static var schemaTableName: String { schema.table.name }
}

/// The live result of a hand-written statement (see ``SQLRunning/observe(sql:as:tables:)``).
public struct SQLObservation<Element: Sendable>: AsyncSequence, Sendable {
    let store: any Store & SQLRunning
    let tables: Set<String>
    let run: @Sendable (any Store & SQLRunning) async throws -> Element

    init(
        store: any Store & SQLRunning, tables: Set<String>,
        run: @escaping @Sendable (any Store & SQLRunning) async throws -> Element
    ) {
        self.store = store
        self.tables = tables
        self.run = run
    }

    /// A new observation; it registers with the store's commits on its first ``Iterator/next()``.
    public func makeAsyncIterator() -> Iterator { Iterator(observation: self) }

    /// One observation of the statement; it ends when it is released.
    public struct Iterator: AsyncIteratorProtocol {
        let observation: SQLObservation
        var observer: IncludeObserver?

        /// The current result first, then a fresh one after each commit to a table the statement
        /// reads; `nil` when the task is cancelled or the store's commit stream ends.
        ///
        /// - Throws: What running the statement throws.
        public mutating func next() async throws -> Element? {
            guard let observer else {
                // Registered before the first run, so no commit falls between the two.
                let registered = IncludeObserver(store: observation.store, tables: observation.tables)
                self.observer = registered
                registered.signal.consume()
                return try await FreshReads.run { try await observation.run(observation.store) }
            }
            guard await observer.signal.wait() else { return nil }
            observer.signal.consume()
            return try await FreshReads.run { try await observation.run(observation.store) }
        }
    }
}
