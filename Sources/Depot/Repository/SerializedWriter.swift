/// A transaction's writer as repositories use it: one call at a time.
///
/// Calls on one transaction may be started side by side (`async let` inside `store.write`), but a
/// transaction is one connection and one undo stack: interleaved savepoints would release each
/// other (`RELEASE depot_1` also releases `depot_2`), so a failing call could no longer be undone
/// alone. Each call therefore waits for the one before it; the calls a call makes itself (nested
/// savepoints, reads inside a write) run at once, since its task holds the lock already.
final class SerializedWriter: StoreWriter {
    let base: any StoreWriter
    private let lock = AsyncLock()

    init(_ base: any StoreWriter) { self.base = base }

    func exclusive<T>(_ body: () async throws -> T) async throws -> T {
        if lock.isHeldByCurrentTask { return try await body() }
        return try await lock.withLock(body)
    }

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await exclusive { try await base.scan(query, read) }
    }

    func count(_ query: SelectQuery) async throws -> Int {
        try await exclusive { try await base.count(query) }
    }

    func aggregate(_ query: AggregateQuery) async throws -> [[StoredValue]] {
        try await exclusive { try await base.aggregate(query) }
    }

    func write(_ rows: RowBatch, into table: TableDescription, mode: WriteMode) async throws -> Int {
        try await exclusive { try await base.write(rows, into: table, mode: mode) }
    }

    func update(_ query: UpdateQuery) async throws -> Int {
        try await exclusive { try await base.update(query) }
    }

    func delete(from table: TableDescription, where predicate: PredicateNode?) async throws -> Int {
        try await exclusive { try await base.delete(from: table, where: predicate) }
    }

    func savepoint<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        try await exclusive { try await base.savepoint { _ in try await body(self) } }
    }
}

extension Transaction {
    /// Runs `body` with the store's own writer of this transaction, in turn with the transaction's
    /// other calls (for capabilities a module adds to some stores' writers, such as DepotSQL's
    /// hand-written SQL).
    package func withWriter<T>(_ body: (any StoreWriter) async throws -> T) async throws -> T {
        try await writer.exclusive { try await body(writer.base) }
    }
}
