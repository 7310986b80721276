import Depot

/// A SQL database engine as ``SQLStore`` drives it: connections that run statements Depot
/// rendered, and what only this engine knows (its pool, its change notifications, its errors).
///
/// ``SQLStore`` owns everything the engines share: validating and resolving queries, rendering
/// every statement, transactions and savepoints, table verification and creation, migrations
/// and commit announcements. An engine answers for the rest. `SQLiteEngine` (DepotSQLite) and
/// `PostgresEngine` (DepotPostgres) are the two Depot ships; `SQLiteStore` and `PostgresStore`
/// are ``SQLStore`` over them.
///
/// ```swift
/// let store = SQLStore(engine: try SQLiteEngine(path: "app.sqlite"))  // what SQLiteStore(path:) is
/// ```
///
/// Every method of an engine and its connections throws `DepotError`s (the engine maps its own
/// failures), so ``SQLStore`` can hand them to callers as they are.
public protocol SQLEngine: Sendable {
    /// A connection to the database, valid inside the closure that lends it.
    associatedtype Connection: SQLConnection

    /// The SQL flavour every statement for this engine is rendered in.
    var dialect: any SQLDialect { get }

    /// Where and how much the store on this engine logs (``SQLLogging``).
    var logging: SQLLogging { get }

    /// Which metrics the store on this engine reports (``SQLMetrics``); swift-metrics' bootstrapped
    /// factory unless the engine says otherwise.
    var metrics: SQLMetrics { get }

    /// Where the store on this engine reports spans (``SQLTracing``); swift-distributed-tracing's
    /// bootstrapped tracer unless the engine says otherwise.
    var tracing: SQLTracing { get }

    /// Makes the database ready for Depot before its first operation (PostgreSQL: the schema and
    /// Depot's functions); later calls return at once.
    func prepare() async throws

    /// Lends a connection for reads outside transactions; reads may run side by side.
    func withReader<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T

    /// Lends a connection for reads on the server the writer writes to, never a replica: what
    /// follows a statement of a transaction under way (a replica would not see that session).
    func withPrimaryReader<T: Sendable>(
        _ body: @escaping @Sendable (Connection) async throws -> T
    ) async throws -> T

    /// Lends the connection a transaction runs on, from `BEGIN` to `COMMIT` or `ROLLBACK`. The
    /// store calls this one transaction at a time.
    func withWriter<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T

    /// Called right after a transaction's `BEGIN` (PostgreSQL names the writing store, so its
    /// change notifications can tell it apart).
    func transactionBegan(on connection: Connection) async throws

    /// Called when a Depot table is found with the expected shape or created, on the connection
    /// that found it (PostgreSQL gives it the trigger that announces its commits).
    func adopt(_ table: TableDescription, on connection: Connection) async throws

    /// Starts forwarding commits made by others (other processes, other connections) to
    /// `broadcaster`, while it has subscribers; called each time someone subscribes.
    func watchExternalCommits(_ broadcaster: CommitBroadcaster)

    /// Whether `error` says that `table` does not exist: a read that began before the transaction
    /// creating the table committed (SQLite's snapshots), answered as an empty table.
    func isMissingTable(_ error: any Error, _ table: TableDescription) -> Bool
    /// Whether `error` says that a search index's queue held changes when a reader searched it
    /// (``SQLDialect/searchQueue(table:column:)``): the store folds the queues and reads again.
    func isSearchQueuePending(_ error: any Error) -> Bool
}

/// One connection of a ``SQLEngine``: it runs rendered statements and reads their rows.
public protocol SQLConnection: Sendable {
    /// Runs `statement` (any rows it returns are discarded) and returns how many rows it changed,
    /// counting only the statement's own rows (not those of triggers or cascades).
    @discardableResult
    func execute(_ statement: SQLStatement) async throws -> Int

    /// Runs a script of one or more statements separated by `;`, as the engine itself splits it
    /// (string literals, quoted identifiers and function bodies keep their semicolons).
    func executeScript(_ sql: String) async throws

    /// Runs `statement`, the renderer's `COMMIT`, and tells whether the transaction committed:
    /// `false` when the engine answered that it rolled back instead (PostgreSQL answers `ROLLBACK`,
    /// without an error, to the `COMMIT` of a transaction that an earlier failed statement aborted).
    ///
    /// - Throws: `DepotError` when the engine refuses the statement.
    func commit(_ statement: SQLStatement) async throws -> Bool

    /// The rows of `statement`, every column read as text (NULL as `nil`): for catalog queries
    /// and migrations, not for entity rows.
    func texts(_ statement: SQLStatement) async throws -> [[String?]]

    /// Runs a rendered `SELECT` of `table`'s columns and hands its rows to `read` through a cursor,
    /// valid only inside `read`.
    func scan<Result: Sendable>(
        _ statement: SQLStatement, table: TableDescription,
        _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result

    /// Runs a rendered `SELECT COUNT(*)`.
    func count(_ statement: SQLStatement) async throws -> Int

    /// Runs a hand-written statement and returns its column names and rows, each value as the
    /// engine gives it (no column types are known).
    func rows(_ statement: SQLStatement) async throws -> SQLRows

    /// Writes `rows` into `table` in the engine's fastest way (statements rendered by `renderer`)
    /// and returns how many rows were written (see `StoreWriter.write(_:into:mode:)`).
    /// `keyPositions` are the batch's key columns, to name a failing row by its key.
    func write(
        _ rows: RowBatch, into table: TableDescription, mode: WriteMode, keyPositions: [Int], renderer: SQLRenderer
    ) async throws -> Int
}

extension SQLEngine {
    /// An engine without replicas reads from the one server: ``withReader(_:)``.
    public func withPrimaryReader<T: Sendable>(
        _ body: @escaping @Sendable (Connection) async throws -> T
    ) async throws -> T {
        try await withReader(body)
    }

    /// Engines whose search indexes have no queue never answer so.
    public func isSearchQueuePending(_ error: any Error) -> Bool { false }

    /// Metrics through swift-metrics' bootstrapped factory, with no dimensions of the engine's own.
    public var metrics: SQLMetrics { SQLMetrics() }

    /// Spans through swift-distributed-tracing's bootstrapped tracer.
    public var tracing: SQLTracing { .bootstrapped }
}

/// The executor an engine runs its writer's work on, while it lends the writer (SQLite's writer
/// thread); `nil` elsewhere. The store's own detached steps of a transaction (`BEGIN`, `COMMIT`)
/// run there too.
package enum WriterExecutor {
    /// The executor of the writer lent to the current task, if the engine has one.
    @TaskLocal package static var current: (any TaskExecutor)?
}
