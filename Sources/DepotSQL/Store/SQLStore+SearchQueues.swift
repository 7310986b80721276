import Depot
import Synchronization

// MARK: - Search index queues (SQLite)

/// The search indexes with a queue (``SearchQueue``) the database holds, by table: learned from
/// the catalog once, forgotten on ``SQLStore/schemaChanged()``.
final class SearchQueueCatalog: Sendable {
    private let indexes = Mutex<[String: [String]]?>(nil)

    /// The indexed columns by table, reading the catalog the first time.
    func columns(_ load: () async throws -> [String: [String]]) async throws -> [String: [String]] {
        if let known = indexes.withLock({ $0 }) { return known }
        let loaded = try await load()
        indexes.withLock { $0 = loaded }
        return loaded
    }

    func forget() { indexes.withLock { $0 = nil } }
}

extension SQLStore {
    /// Runs `read` (a read on a reader connection); when its search met a queue holding changes
    /// (another client's writes: ``SQLFunctions/searchReady``), folds every queue through the
    /// writer and reads again.
    ///
    /// - Throws: What `read` throws; `DepotError` of kind `.transaction` when the calling task
    ///   holds the store's write lock (a store read inside its own `write`), as the writer cannot
    ///   fold then.
    func foldingSearchQueues<T: Sendable>(_ read: () async throws -> T) async throws -> T {
        var folds = 0
        while true {
            do {
                return try await read()
            } catch  where engine.isSearchQueuePending(error) && folds < 3 {
                folds += 1
                guard !writeLock.isHeldByCurrentTask else {
                    throw DepotError(
                        .transaction,
                        "another client's changes to a searched table wait to be indexed, and this task's "
                            + "transaction holds the writer: search through the transaction (`tx`) instead",
                        underlying: error)
                }
                searchQueues.forget()
                try await withWriter { writer in try await writer.foldAllSearchQueues() }
            }
        }
    }

    /// The search indexes with a queue, by table, from the catalog (`<table>#<column>#words#queue`).
    func searchQueueColumns(on connection: Connection) async throws -> [String: [String]] {
        guard renderer.dialect.searchQueue(table: "t", column: "c") != nil else { return [:] }
        return try await searchQueues.columns {
            let suffix = "#words#queue"
            var found: [String: [String]] = [:]
            for row in try await connection.rows(renderer.catalogTables).rows {
                guard case .text(let name)? = row.first, name.hasSuffix(suffix) else { continue }
                let stem = name.dropLast(suffix.count)
                guard let hash = stem.lastIndex(of: "#") else { continue }
                found[String(stem[..<hash]), default: []].append(String(stem[stem.index(after: hash)...]))
            }
            return found
        }
    }
}

extension SQLWriter {
    /// Folds the queues of the searched indexes into them, so that a search inside the
    /// transaction sees its own writes.
    func foldSearchQueues(_ searched: [(table: TableDescription, column: String)]) async throws {
        for (table, column) in searched {
            guard let queue = renderer.dialect.searchQueue(table: table.name, column: column) else { continue }
            try await fold(queue)
        }
    }

    /// Folds every queue of the database that holds changes.
    func foldAllSearchQueues() async throws {
        for (table, columns) in try await store.searchQueueColumns(on: connection) {
            for column in columns {
                guard let queue = renderer.dialect.searchQueue(table: table, column: column) else { continue }
                try await fold(queue)
            }
        }
    }

    /// Folds the queues of the tables this transaction wrote (every queue after a hand-written
    /// statement), before it commits: its rows are in the index when readers see them.
    func foldWrittenSearchQueues() async throws {
        let indexes = try await store.searchQueueColumns(on: connection)
        guard !indexes.isEmpty else { return }
        let written = books.written
        for (table, columns) in indexes where written.anything || written.tables.contains(table) {
            for column in columns {
                guard let queue = renderer.dialect.searchQueue(table: table, column: column) else { continue }
                try await fold(queue)
            }
        }
    }

    /// Folds `queue` into its index when it holds changes.
    func fold(_ queue: SearchQueue) async throws {
        guard try await connection.count(queue.pending) > 0 else { return }
        for statement in queue.fold { _ = try await connection.execute(statement) }
    }
}
