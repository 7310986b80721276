import Synchronization

/// A store that keeps every table in memory: for tests, previews and caches.
///
/// It runs the complete API with the same semantics as the SQL stores (three-valued NULL logic,
/// byte-order text comparison, full Unicode case folding for case-insensitive operators), and
/// passes the same conformance suite. Transactions are serialized and all-or-nothing; reads see
/// the last committed state and never wait for a writer.
///
/// ```swift
/// let store = InMemoryStore()
/// let airports = store.repository(Airport.self)
/// try await airports.upsert(list)
/// ```
public final class InMemoryStore: Store, MigrationTransactions {
    private let committed = Mutex(InMemoryDatabase())
    private let writeLock = AsyncLock()
    private let broadcaster = CommitBroadcaster()

    /// An empty store.
    public init() {}

    /// Runs `query` over the last committed state, without waiting for a running transaction.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` or `.schemaMismatch`, as
    ///   ``StoreReader/scan(_:_:)`` describes; and whatever `read` throws.
    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try committed.withLock { $0 }.scan(query, read)
    }

    /// Counts the rows of `query` in the last committed state.
    ///
    /// - Throws: ``DepotError`` of kind `.invalidQuery` or `.schemaMismatch`.
    public func count(_ query: SelectQuery) async throws -> Int {
        try committed.withLock { $0 }.count(query)
    }

    /// Runs `body` on a private copy of the tables, then publishes the copy as the committed state
    /// (and announces the tables it wrote), or drops it if `body` throws. Transactions run one at
    /// a time, first come first served.
    ///
    /// - Throws: The error `body` throws; ``DepotError`` of kind `.transaction` when the writer
    ///   is used after `body` returned.
    public func transaction<T: Sendable>(
        _ body: @Sendable (any StoreWriter) async throws -> T
    ) async throws -> T {
        try await withMigrationSession { writer in try await body(writer) }
    }

    /// ``transaction(_:)`` with the writer's own type (what migrations run on). Nothing is rebuilt
    /// in memory, so `rebuildsTables` changes nothing.
    package func withMigrationSession<T: Sendable>(
        rebuildsTables: Bool, _ body: @Sendable (InMemoryWriter) async throws -> T
    ) async throws -> T {
        if writeLock.isHeldByCurrentTask { throw DepotError.transactionInsideTransaction }
        return try await writeLock.withLock { try await runTransaction(body) }
    }

    private func runTransaction<T: Sendable>(_ body: @Sendable (InMemoryWriter) async throws -> T) async throws -> T {
        let writer = InMemoryWriter(committed.withLock { $0 })
        let result: T
        do {
            result = try await body(writer)
        } catch {
            writer.end()
            throw error
        }
        let (database, written) = writer.end()
        let ticket = broadcaster.commitStarting()
        committed.withLock { $0 = database }
        broadcaster.publish(written.commit())
        withExtendedLifetime(ticket) {}
        return result
    }

    /// A stream of this store's commits that wrote something, from now on; a consumer that falls
    /// behind keeps the newest 256.
    public func commits() -> AsyncStream<StoreCommit> {
        broadcaster.subscribe()
    }

    /// The last committed state.
    func currentDatabase() -> InMemoryDatabase { committed.withLock { $0 } }
}

/// The tables of an in-memory store: a value, so a transaction works on a copy.
struct InMemoryDatabase: Sendable {
    struct Table: Sendable {
        var description: TableDescription
        var rows: [[StoredValue]: [StoredValue]] = [:]
        /// Values of columns added by migrations with a default, for rows written without them.
        var defaults: [String: StoredValue] = [:]
    }

    var tables: [String: Table] = [:]
    /// Indexes made by migrations; unique ones are enforced on every write.
    var indexes: [String: IndexDescription] = [:]
    /// The migration ledger.
    var ledger: [AppliedMigration] = []

    /// The stored table for `description` (nil when it does not exist), checked to fit it as the
    /// SQL stores check theirs: every declared column present alike, the same key, other columns
    /// nullable or with a default.
    func table(for description: TableDescription) throws -> Table? {
        guard let table = tables[description.name] else { return nil }
        let stored = table.description.columns.map {
            SchemaComparison.StoredColumn(
                name: $0.name, type: $0.type.rawValue, isNullable: $0.isNullable,
                hasDefault: table.defaults[$0.name] != nil)
        }
        let differences =
            SchemaComparison.differences(
                description, expected: description.columns, stored: stored, primaryKey: table.description.primaryKey,
                typeName: \.rawValue)
            + SchemaComparison.indexDifferences(
                description, stored: indexes.values.filter { $0.table == description.name })
        if let error = SchemaComparison.mismatch(description, differences) { throw error }
        return table
    }

    /// The rows of `description`'s table, in its column order.
    func rows(of description: TableDescription) throws -> [[StoredValue]] {
        guard let table = try table(for: description) else { return [] }
        return Self.project(Array(table.rows.values), from: table.description, to: description)
    }

    /// `rows` of a table shaped `stored`, with the columns of `expected` in its order.
    static func project(_ rows: [[StoredValue]], from stored: TableDescription, to expected: TableDescription)
        -> [[StoredValue]]
    {
        if stored.columns == expected.columns { return rows }
        let positions = expected.columns.map { column in stored.columns.firstIndex { $0.name == column.name } ?? 0 }
        return rows.map { row in positions.map { row[$0] } }
    }

    func scan<Result>(_ query: SelectQuery, _ read: (inout any StoreCursor) throws -> Result) throws -> Result {
        try query.validate()
        let rows = try rows(of: query.table)
        var result = try evaluator(query.table).run(query, over: rows)
        if query.columns != nil { result = Self.project(result, from: query.table, to: query.resultTable) }
        var cursor: any StoreCursor = StoredRowsCursor(rows: result)
        return try read(&cursor)
    }

    func count(_ query: SelectQuery) throws -> Int {
        try query.validate()
        let rows = try rows(of: query.table)
        return try evaluator(query.table).run(query, over: rows).count
    }

    /// Evaluates queries over `table`, with subqueries reading this database's other tables.
    func evaluator(_ table: TableDescription) -> QueryEvaluator {
        QueryEvaluator(table: table) { try self.rows(of: $0) }
    }

    /// Writes `batch`; returns how many of its rows were written (see ``StoreWriter/write(_:into:mode:)``).
    @discardableResult
    mutating func write(_ batch: RowBatch, into description: TableDescription, mode: WriteMode) throws -> Int {
        var table: Table
        if let existing = try self.table(for: description) {
            table = existing
        } else {
            table = Table(description: description)
            for index in description.indexes { indexes[index.name] = index }
        }
        var written = 0
        let shape = table.description
        let keyPositions = try shape.keyPositions(inWrite: batch)
        let positions = try batch.columns.map { try shape.requireColumn($0) }
        for rowIndex in 0..<batch.count {
            let values = batch.row(rowIndex)
            let key = keyPositions.map { values[values.startIndex + $0] }
            if var existing = table.rows[key] {
                if mode == .insert {
                    throw DepotError(
                        .constraintViolation,
                        "\(description.name): a row with key \(TableDescription.describeKey(key)) already exists",
                        table: description.name)
                }
                let before = existing
                for (offset, position) in positions.enumerated() {
                    existing[position] = values[values.startIndex + offset]
                }
                // A write that changes nothing leaves the row as it was, as SQL stores do.
                if existing == before { continue }
                try Self.checkNotNull(existing, shape, key: key)
                table.rows[key] = existing
                written += 1
            } else if mode != .update {
                var row = shape.columns.map { table.defaults[$0.name] ?? .null }
                for (offset, position) in positions.enumerated() {
                    row[position] = values[values.startIndex + offset]
                }
                try Self.checkNotNull(row, shape, key: key)
                table.rows[key] = row
                written += 1
            }
        }
        try checkUniqueIndexes(of: table)
        tables[description.name] = table
        return written
    }

    /// Throws if a unique index of `table` finds two rows with the same non-NULL values.
    func checkUniqueIndexes(of table: Table) throws {
        for index in indexes.values where index.isUnique && index.table == table.description.name {
            let positions = index.columns.compactMap { table.description.columnIndex($0) }
            var seen: Set<[StoredValue]> = []
            for row in table.rows.values {
                let values = positions.map { row[$0] }
                if values.contains(where: \.isNull) { continue }
                if !seen.insert(values).inserted {
                    throw DepotError(
                        .constraintViolation,
                        "\(table.description.name): unique index '\(index.name)' (\(index.columns.joined(separator: ", "))) "
                            + "holds \(TableDescription.describeKey(values)) twice", table: table.description.name)
                }
            }
        }
    }

    static func checkNotNull(_ row: [StoredValue], _ description: TableDescription, key: [StoredValue]) throws {
        let missing = zip(description.columns, row).filter { !$0.0.isNullable && $0.1.isNull }.map(\.0.name)
        guard missing.isEmpty else {
            throw DepotError(
                .constraintViolation,
                "\(description.name) row \(TableDescription.describeKey(key)): NULL in NOT NULL column "
                    + missing.joined(separator: ", "),
                table: description.name, column: missing.first)
        }
    }

    mutating func delete(from description: TableDescription, where predicate: PredicateNode?) throws -> Int {
        try predicate?.validate(against: description)
        guard var table = try table(for: description) else { return 0 }
        let before = table.rows.count
        if let predicate {
            let condition = try evaluator(table.description).condition(predicate)
            table.rows = table.rows.filter { condition($0.value) != true }
        } else {
            table.rows = [:]
        }
        tables[description.name] = table
        return before - table.rows.count
    }
}

/// A transaction of the in-memory store: a working copy of the tables, and the tables touched.
package final class InMemoryWriter: StoreWriter {
    struct State {
        var database: InMemoryDatabase
        var touched = WrittenRows()
        var isActive = true
    }
    private let state: Mutex<State>

    init(_ database: InMemoryDatabase) {
        state = Mutex(State(database: database))
    }

    /// Ends the transaction; later calls through this writer fail.
    @discardableResult
    func end() -> (InMemoryDatabase, WrittenRows) {
        state.withLock { state in
            state.isActive = false
            return (state.database, state.touched)
        }
    }

    func withActive<T>(_ body: (inout State) throws -> T) throws -> T {
        try state.withLock { state in
            guard state.isActive else {
                throw DepotError(.transaction, "the transaction was used after it ended")
            }
            return try body(&state)
        }
    }

    package func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try withActive { $0.database }.scan(query, read)
    }

    package func count(_ query: SelectQuery) async throws -> Int {
        try withActive { $0.database }.count(query)
    }

    package func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        try withActive { state in
            if table.writeChangesNothing(rows, mode: mode) {
                _ = try table.keyPositions(inWrite: rows)  // still refuse a malformed batch
                return 0
            }
            var database = state.database
            let written = try database.write(rows, into: table, mode: mode)
            state.database = database
            if written > 0 {
                state.touched.wrote(rows, into: table, keyPositions: try table.keyPositions(inWrite: rows))
            }
            return written
        }
    }

    package func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try withActive { state in
            let removed = try state.database.delete(from: table, where: predicate)
            if removed > 0 { state.touched.wrote(table, where: predicate) }
            return removed
        }
    }

    package func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        let snapshot = try withActive { $0 }
        do {
            return try await body(self)
        } catch {
            try withActive { state in
                state.database = snapshot.database
                state.touched = snapshot.touched
            }
            throw error
        }
    }
}

extension InMemoryStore: CommitProgressReporting {
    package var commitProgress: CommitProgress? { broadcaster.current }
}
