import Depot
import Synchronization

// MARK: - Search index queues (SQLite)

/// The table and column a search index's catalog name (`<table>#<column><suffix>`) names.
package enum SearchIndexName {
    /// `nil` for a name without `suffix`, or without a column before it.
    package static func parts(of name: String, suffix: String) -> (table: String, column: String)? {
        guard name.hasSuffix(suffix) else { return nil }
        let stem = name.dropLast(suffix.count)
        guard let hash = stem.lastIndex(of: "#"), hash != stem.startIndex else { return nil }
        let column = stem[stem.index(after: hash)...]
        return column.isEmpty ? nil : (String(stem[..<hash]), String(column))
    }
}

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
            var found: [String: [String]] = [:]
            for row in try await connection.rows(renderer.catalogTables).rows {
                guard case .text(let name)? = row.first,
                    let index = SearchIndexName.parts(of: name, suffix: "#words#queue")
                else { continue }
                found[index.table, default: []].append(index.column)
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
        try await foldSearchQueues(of: store.searchQueueColumns(on: connection)) { _ in true }
    }

    /// Folds the queues of the tables this transaction wrote (every queue after a hand-written
    /// statement), before it commits: its rows are in the index when readers see them.
    func foldWrittenSearchQueues() async throws {
        let indexes = try await store.searchQueueColumns(on: connection)
        guard !indexes.isEmpty else { return }
        let written = books.written
        try await foldSearchQueues(of: indexes) { written.anything || written.tables.contains($0) }
    }

    /// Folds the queues of `indexes` (columns by table) whose table `included` accepts.
    private func foldSearchQueues(of indexes: [String: [String]], where included: (String) -> Bool) async throws {
        for (table, columns) in indexes where included(table) {
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
