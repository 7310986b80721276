import Depot
import DepotSQL
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// SQLite as `SQLStore` drives it: a database file in WAL mode behind a GRDB pool of
/// connections (reads run side by side with each other and with the one writer), Depot's
/// functions registered on each connection, and `PRAGMA data_version` for other processes'
/// commits.
///
/// Use it through ``SQLiteStore``: `try SQLiteStore(path: "app.sqlite")`.
public final class SQLiteEngine: SQLEngine {
    /// The database file.
    public let path: String
    package let database: DatabasePool
    /// Whether the external-change monitor runs.
    private let monitorRunning = Mutex(false)
    private let removesFolderOnDeinit: Bool
    /// The connections' prepared statements, bounded.
    let statements = SQLiteStatementCache()
    /// Where writes run: a transaction's body runs on this thread, and its statements reach the
    /// writer connection without leaving it (see ``withWriter(_:)``).
    let writerThread = SQLiteWriterThread()

    /// Opens (or creates) the database file at `path`.
    ///
    /// - Throws: `DepotError` of kind `.storage` naming the path when the file is not a SQLite
    ///   database or cannot be opened for writing.
    /// Where and how much the store logs.
    public let logging: SQLLogging
    /// Which metrics the store reports.
    public let metrics: SQLMetrics
    /// Where the store reports spans.
    public let tracing: SQLTracing

    init(
        path: String, busyTimeout: Duration, removesFolderOnDeinit: Bool, logging: SQLLogging, metrics: SQLMetrics,
        tracing: SQLTracing, preparing prepare: (@Sendable (Database) throws -> Void)? = nil
    ) throws {
        self.logging = logging
        self.metrics = metrics
        self.tracing = tracing
        self.path = path
        self.removesFolderOnDeinit = removesFolderOnDeinit
        var configuration = Configuration()
        configuration.busyMode = .timeout(
            TimeInterval(busyTimeout.components.seconds) + TimeInterval(busyTimeout.components.attoseconds) / 1e18)
        // Depot keeps a transaction open across several accesses of one `write { }` and ends it
        // itself, under its own lock.
        configuration.allowsUnsafeTransactions = true
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(in: db)
            try prepare?(db)
        }
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            // Touch the file so "not a database" surfaces now, not on the first query.
            _ = try database.read { db in try Row.fetchAll(db, sql: SQLRenderer(dialect: .sqlite).catalogTables.sql) }
        } catch {
            throw SQLiteErrors.opening(path: path, error)
        }
    }

    deinit {
        if removesFolderOnDeinit {
            // Connections first: a pool still open would write its WAL and checkpoint into files
            // already unlinked.
            try? database.close()
            try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        }
    }

    /// `SQLiteDialect`.
    public var dialect: any SQLDialect { .sqlite }

    /// Nothing to prepare: functions are registered as each connection opens.
    public func prepare() async throws {}

    /// How many statements the writer connection holds prepared (its statement cache included).
    package func preparedStatementCount() async throws -> Int {
        try await database.writeWithoutTransaction { db in
            guard let connection = db.sqliteConnection else { return 0 }
            var count = 0
            var statement = sqlite3_next_stmt(connection, nil)
            while statement != nil {
                count += 1
                statement = sqlite3_next_stmt(connection, statement)
            }
            return count
        }
    }

    /// Lends a reader of the pool; each call on it runs in its own read of the latest commit.
    public func withReader<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) async throws -> T
    ) async throws -> T {
        try await body(SQLiteConnection(engine: self, isWriter: false))
    }

    /// Lends the pool's writer connection, and runs `body` on the writer's own thread: each of its
    /// statements then runs on the connection at once, where a call from Swift's shared threads
    /// would hop to the connection's queue and back (two thread switches per statement, most of
    /// a small transaction's time).
    public func withWriter<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) async throws -> T
    ) async throws -> T {
        try await WriterExecutor.$current.withValue(writerThread) {
            try await withTaskExecutorPreference(writerThread) {
                try await body(SQLiteConnection(engine: self, isWriter: true))
            }
        }
    }

    /// Nothing to do: `BEGIN IMMEDIATE` holds the database's write lock.
    public func transactionBegan(on connection: SQLiteConnection) async throws {}

    /// Nothing to do: commits by others are seen through `PRAGMA data_version`.
    public func adopt(_ table: TableDescription, on connection: SQLiteConnection) async throws {}

    /// Whether `error` is `depot_search_ready`'s: a reader met a search queue holding changes.
    public func isSearchQueuePending(_ error: any Error) -> Bool {
        let cause = (error as? DepotError)?.underlying ?? error
        let message = (cause as? SQLiteFailure)?.message ?? (cause as? DatabaseError)?.message
        return message == SQLFunctions.searchQueuePending
    }

    /// Whether `error` is SQLite's "no such table" for `table`.
    public func isMissingTable(_ error: any Error, _ table: TableDescription) -> Bool {
        let cause = (error as? DepotError)?.underlying ?? error
        return (cause as? DatabaseError)?.message == "no such table: \(table.name)"
    }

    /// How often `PRAGMA data_version` is read while observers listen.
    public static let externalChangePollInterval: Duration = .milliseconds(50)

    /// While `broadcaster` has subscribers, reads `PRAGMA data_version` on the writer connection
    /// every ``externalChangePollInterval``; a commit by another connection or process is announced
    /// as a change of every table.
    public func watchExternalCommits(_ broadcaster: CommitBroadcaster) {
        let start = monitorRunning.withLock { running -> Bool in
            if running { return false }
            running = true
            return true
        }
        guard start else { return }
        // The baseline is queued on the writer now, before the subscriber can act (a commit by
        // another process right after subscribing must show up as a change, not as the starting
        // point), without waiting here: this runs on a Swift concurrency thread, and the writer may
        // be inside a transaction that needs one.
        let versionSQL = SQLiteDialect.dataVersion.sql
        let tablesSQL = SQLRenderer(dialect: .sqlite).catalogTables.sql
        let baseline = AsyncStream.makeStream(of: Int?.self)
        database.asyncWriteWithoutTransaction { db in
            baseline.continuation.yield(try? Int.fetchOne(db, sql: versionSQL))
            baseline.continuation.finish()
        }
        Task.detached { [weak self] in
            var last = await baseline.stream.first { _ in true } ?? nil
            while let engine = self {
                let keepGoing = engine.monitorRunning.withLock { running -> Bool in
                    if broadcaster.subscriberCount == 0 { running = false }
                    return running
                }
                guard keepGoing else { return }
                try? await Task.sleep(for: SQLiteEngine.externalChangePollInterval)
                let known = last
                let probe = try? await engine.database.writeWithoutTransaction { db -> (Int, [String]) in
                    // data_version on the writer connection changes only for other connections' commits;
                    // the table names are read only then.
                    let version = try Int.fetchOne(db, sql: versionSQL) ?? 0
                    guard let known, known != version else { return (version, []) }
                    return (version, try String.fetchAll(db, sql: tablesSQL))
                }
                if let (version, tables) = probe {
                    if !tables.isEmpty { broadcaster.publish(StoreCommit(tables: Set(tables))) }
                    last = version
                }
            }
        }
    }
}

/// A connection of ``SQLiteEngine``: the pool's writer, or any of its readers. Each call runs as
/// one access of the pool: a read on the calling thread, a write on the writer's own thread.
public struct SQLiteConnection: SQLConnection {
    let engine: SQLiteEngine
    let isWriter: Bool

    /// Runs `body` on the connection; SQLite's errors arrive as `DepotError`s.
    ///
    /// A reader's `body` runs in a read of its own, on the calling thread. On the writer's thread
    /// (``SQLiteEngine/withWriter(_:)``), `body` runs on the writer connection at once, from that
    /// thread (a synchronous access); from anywhere else it is awaited on the connection's queue.
    private func run<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            let database = engine.database
            guard isWriter else {
                // A read of a reader connection from the calling thread: GRDB's awaited read would
                // hop to the reader's queue and back, two thread switches that cost several times
                // a small query. The thread waits for a reader only while the pool's readers are
                // all lent, each to a body like this one, which ends without awaiting. No GRDB
                // savepoint around it: each call runs one statement, which SQLite reads in a
                // transaction of its own (one snapshot of the latest commit).
                return try await Self.interruptibly(StatementSlot(), body) { try database.unsafeRead($0) }
            }
            if engine.writerThread.isCurrent {
                return try await Self.interruptibly(engine.writerThread.running, body) {
                    try database.writeWithoutTransaction($0)
                }
            }
            return try await database.writeWithoutTransaction(body)
        } catch {
            throw SQLiteErrors.map(error, path: engine.path)
        }
    }

    /// Runs `body` through `access` (a synchronous access of a connection, from the calling
    /// thread) as an awaited access of GRDB does: a cancelled task's statement throws before it
    /// starts, and one under way is interrupted.
    private static func interruptibly<T>(
        _ running: StatementSlot, _ body: @escaping (Database) throws -> T,
        access: ((Database) throws -> T) throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        return try await withTaskCancellationHandler {
            try access { db in
                running.slot.withLock { $0 = db.sqliteConnection.map(RunningStatement.init) }
                defer { running.slot.withLock { $0 = nil } }
                // Cancelled after the check above, before the handler could see the connection.
                try Task.checkCancellation()
                return try body(db)
            }
        } onCancel: {
            // Under the lock, so the connection is still in this statement: SQLite stops it at
            // its next step with SQLITE_INTERRUPT (read as the cancellation, `SQLiteErrors`).
            running.slot.withLock { $0?.interrupt() }
        }
    }

    /// Runs `statement`; returns `sqlite3_changes`.
    @discardableResult
    public func execute(_ statement: SQLStatement) async throws -> Int {
        let arguments = try SQLiteOperations.arguments(statement.arguments)
        return try await run { db in
            try db.execute(sql: statement.sql, arguments: arguments)
            return db.changesCount
        }
    }

    /// Runs `statement` (`COMMIT`): SQLite either commits or throws (a transaction it rolled back
    /// by itself has nothing to commit, and `COMMIT` fails saying so), so this returns `true`.
    ///
    /// A database file deleted or replaced since the store opened it is not committed to: SQLite
    /// would write into the unlinked file, and the data would vanish when the store closes. The
    /// commit fails with `.storage` instead (and the transaction rolls back).
    public func commit(_ statement: SQLStatement) async throws -> Bool {
        let path = engine.path
        return try await run { db in
            if Self.fileHasMoved(db) {
                throw DepotError(
                    .storage,
                    "the database file '\(path)' was deleted or replaced while the store had it open: nothing "
                        + "was committed (it would have gone into a file no one can open again); open the store anew")
            }
            try db.execute(sql: statement.sql)
            return !db.isInsideTransaction
        }
    }

    /// Whether the main database file was unlinked, renamed or replaced since it was opened
    /// (`SQLITE_FCNTL_HAS_MOVED`: a `stat` of the path against the open file).
    static func fileHasMoved(_ db: Database) -> Bool {
        guard let handle = db.sqliteConnection else { return false }
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// Runs every statement of `sql` in turn, as SQLite's parser splits them.
    public func executeScript(_ sql: String) async throws {
        try await run { db in try db.execute(sql: sql) }
    }

    /// The rows of `statement` as text.
    public func texts(_ statement: SQLStatement) async throws -> [[String?]] {
        let arguments = try SQLiteOperations.arguments(statement.arguments)
        return try await run { db in
            try Row.fetchAll(db, sql: statement.sql, arguments: arguments).map { row in
                row.databaseValues.map { value -> String? in
                    switch value.storage {
                    case .null: nil
                    case .int64(let number): String(number)
                    case .double(let number): "\(number)"
                    case .string(let text): text
                    case .blob(let data): String(decoding: data, as: UTF8.self)
                    }
                }
            }
        }
    }

    /// The rows of a hand-written statement, each value by its storage class.
    public func rows(_ statement: SQLStatement) async throws -> SQLRows {
        let arguments = try SQLiteOperations.arguments(statement.arguments)
        let sql = statement.sql
        let isWriter = isWriter
        return try await run { db -> SQLRows in
            let prepared = try db.makeStatement(sql: sql)
            // Reads never write: a statement that would is refused before it runs.
            guard isWriter || prepared.isReadonly else { throw DepotError.writeOutsideTransaction(engine: "SQLite") }
            let rows: [[StoredValue]] = try Row.fetchAll(prepared, arguments: arguments).map { row in
                row.databaseValues.map { value -> StoredValue in
                    switch value.storage {
                    case .null: .null
                    case .int64(let number): .integer(number)
                    case .double(let number): .double(number)
                    case .string(let text): .text(text)
                    case .blob(let data): .blob(data)
                    }
                }
            }
            return SQLRows(columns: prepared.columnNames, rows: rows)
        }
    }

    /// Runs a `SELECT` and hands its rows to `read` through a cursor on the statement.
    public func scan<Result: Sendable>(
        _ statement: SQLStatement, table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await run { db in
            try SQLiteOperations.scan(statement, table: table, db: db, statements: engine.statements, read)
        }
    }

    /// Runs a `SELECT COUNT(*)`.
    public func count(_ statement: SQLStatement) async throws -> Int {
        try await run { db in try SQLiteOperations.count(statement, db: db, statements: engine.statements) }
    }

    /// Writes the batch with one prepared statement (`SQLRenderer.insert(into:columns:mode:)`),
    /// bound and stepped once per row.
    public func write(
        _ rows: RowBatch, into table: TableDescription, mode: WriteMode, keyPositions: [Int], renderer: SQLRenderer
    ) async throws -> Int {
        let sql = renderer.insert(into: table, columns: rows.columns, mode: mode)
        return try await run { db in
            try SQLiteOperations.write(
                rows, sql: sql, table: table, keyPositions: keyPositions, db: db, statements: engine.statements)
        }
    }
}

/// The thread an engine's writes run on: a serial queue that runs the jobs of the tasks that
/// prefer it (`withTaskExecutorPreference`), and can tell whether it is the current one.
final class SQLiteWriterThread: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "depot.sqlite.writer")
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }

    /// Whether the calling code runs on this thread.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    /// The writer connection while a statement of this thread runs on it: what a cancelled task
    /// interrupts.
    let running = StatementSlot()
}

/// The connection of a statement while it runs: what a cancelled task interrupts.
final class StatementSlot: Sendable {
    let slot = Mutex<RunningStatement?>(nil)
}

/// A connection with a statement under way, which another thread may interrupt.
struct RunningStatement: @unchecked Sendable {
    // `sqlite3_interrupt` is safe from any thread while the connection is open, which the
    // owner's lock guarantees (it clears this before the statement's access ends).
    let connection: OpaquePointer

    func interrupt() { sqlite3_interrupt(connection) }
}
