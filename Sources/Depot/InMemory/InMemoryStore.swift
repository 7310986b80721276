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
public final class InMemoryStore: Store {
    private let committed = Mutex(InMemoryDatabase())
    private let writeLock = AsyncLock()
    private let broadcaster = CommitBroadcaster()

    /// An empty store.
    public init() {}

    public func fetch<Value: Sendable>(
        _ query: SelectQuery, decode: @escaping @Sendable ([StoredValue]) throws -> Value
    ) async throws -> [Value] {
        try committed.withLock { $0 }.fetch(query, decode: decode)
    }

    public func count(_ query: SelectQuery) async throws -> Int {
        try committed.withLock { $0 }.count(query)
    }

    public func transaction<T: Sendable>(
        _ body: @Sendable (any StoreWriter) async throws -> T
    ) async throws -> T {
        await writeLock.lock()
        defer { writeLock.unlock() }
        let writer = InMemoryWriter(committed.withLock { $0 })
        let result: T
        do {
            result = try await body(writer)
        } catch {
            writer.end()
            throw error
        }
        let (database, touched) = writer.end()
        committed.withLock { $0 = database }
        broadcaster.publish(StoreCommit(tables: touched))
        return result
    }

    public func commits() -> AsyncStream<StoreCommit> {
        broadcaster.subscribe()
    }
}

/// The tables of an in-memory store: a value, so a transaction works on a copy.
struct InMemoryDatabase: Sendable {
    struct Table: Sendable {
        var description: TableDescription
        var rows: [[StoredValue]: [StoredValue]] = [:]
    }

    var tables: [String: Table] = [:]

    /// The rows of `description`'s table, checking that the stored table has the same shape.
    func rows(of description: TableDescription) throws -> [[StoredValue]: [StoredValue]] {
        guard let table = tables[description.name] else { return [:] }
        try Self.check(table.description, against: description)
        return table.rows
    }

    static func check(_ stored: TableDescription, against expected: TableDescription) throws {
        guard stored.columns == expected.columns, stored.primaryKey == expected.primaryKey else {
            throw DepotError(
                .schemaMismatch,
                "table '\(expected.name)' exists with other columns than \(expected.entityName) declares",
                table: expected.name)
        }
    }

    func fetch<Value>(_ query: SelectQuery, decode: ([StoredValue]) throws -> Value) throws -> [Value] {
        try query.validate()
        let rows = try rows(of: query.table).values
        return try evaluator(query.table).run(query, over: rows).map(decode)
    }

    func count(_ query: SelectQuery) throws -> Int {
        try query.validate()
        let rows = try rows(of: query.table).values
        return try evaluator(query.table).run(query, over: rows).count
    }

    /// Evaluates queries over `table`, with subqueries reading this database's other tables.
    func evaluator(_ table: TableDescription) -> QueryEvaluator {
        QueryEvaluator(table: table) { try Array(self.rows(of: $0).values) }
    }

    mutating func write(_ batch: RowBatch, into description: TableDescription, mode: WriteMode) throws {
        var table = tables[description.name] ?? Table(description: description)
        try Self.check(table.description, against: description)
        let keyPositions = try description.keyPositions(inWrite: batch.columns)
        let positions = try batch.columns.map { try description.requireColumn($0) }
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
                for (offset, position) in positions.enumerated() {
                    existing[position] = values[values.startIndex + offset]
                }
                try Self.checkNotNull(existing, description, key: key)
                table.rows[key] = existing
            } else if mode != .update {
                var row = [StoredValue](repeating: .null, count: description.columns.count)
                for (offset, position) in positions.enumerated() {
                    row[position] = values[values.startIndex + offset]
                }
                try Self.checkNotNull(row, description, key: key)
                table.rows[key] = row
            }
        }
        tables[description.name] = table
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
        guard var table = tables[description.name] else { return 0 }
        try Self.check(table.description, against: description)
        let before = table.rows.count
        if let predicate {
            let condition = try evaluator(description).condition(predicate)
            table.rows = table.rows.filter { condition($0.value) != true }
        } else {
            table.rows = [:]
        }
        tables[description.name] = table
        return before - table.rows.count
    }
}

/// A transaction of the in-memory store: a working copy of the tables, and the tables touched.
final class InMemoryWriter: StoreWriter {
    private struct State {
        var database: InMemoryDatabase
        var touched: Set<String> = []
        var isActive = true
    }
    private let state: Mutex<State>

    init(_ database: InMemoryDatabase) {
        state = Mutex(State(database: database))
    }

    /// Ends the transaction; later calls through this writer fail.
    @discardableResult
    func end() -> (InMemoryDatabase, Set<String>) {
        state.withLock { state in
            state.isActive = false
            return (state.database, state.touched)
        }
    }

    private func withActive<T>(_ body: (inout State) throws -> T) throws -> T {
        try state.withLock { state in
            guard state.isActive else {
                throw DepotError(.transaction, "the transaction was used after it ended")
            }
            return try body(&state)
        }
    }

    func fetch<Value: Sendable>(
        _ query: SelectQuery, decode: @escaping @Sendable ([StoredValue]) throws -> Value
    ) async throws -> [Value] {
        try withActive { $0.database }.fetch(query, decode: decode)
    }

    func count(_ query: SelectQuery) async throws -> Int {
        try withActive { $0.database }.count(query)
    }

    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws {
        try withActive { state in
            if table.writeChangesNothing(rows, mode: mode) {
                _ = try table.keyPositions(inWrite: rows.columns)  // still refuse a malformed batch
                return
            }
            var database = state.database
            try database.write(rows, into: table, mode: mode)
            state.database = database
            state.touched.insert(table.name)
        }
    }

    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try withActive { state in
            let removed = try state.database.delete(from: table, where: predicate)
            if removed > 0 { state.touched.insert(table.name) }
            return removed
        }
    }

    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
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
