import Depot
import DepotSQL
import Foundation
import GRDB
import Synchronization

/// Depot's embedded default: a SQLite database file, through GRDB.
///
/// The file is opened in WAL mode with a pool of connections: reads run concurrently with each
/// other and with a write; writes are serialized. Tables for the entities you use are created
/// on first use (`CREATE TABLE IF NOT EXISTS`) and checked against the schema when they exist.
///
/// ```swift
/// let store = try SQLiteStore(path: "airports.sqlite")
/// let airports = store.repository(Airport.self)
/// try await airports.upsert(list)
/// // SQL: INSERT INTO "airports" ("icao", …) VALUES (?, …) ON CONFLICT ("icao") DO UPDATE SET …
/// ```
///
/// Storage: `Decimal` as exact text (`DECIMAL_TEXT`, compared numerically through a collation),
/// `Date` as seconds since the reference date (`DATE_REAL`), rounded to the microsecond as on every
/// store (``Date/microseconds``), `UUID` as 16
/// bytes (`UUID_BLOB`), `URL` and JSON values as text, `Bool` as 0/1.
/// Another process may use the same file; busy waits up to `busyTimeout` instead of failing.
public final class SQLiteStore: Store {
    /// The database file.
    public let path: String
    let database: DatabasePool
    let renderer = SQLRenderer(dialect: .sqlite)
    let writeLock = AsyncLock()
    let broadcaster = CommitBroadcaster()
    /// Tables known to exist with the expected shape.
    let verifiedTables = Mutex<Set<TableDescription>>([])
    /// Whether the external-change monitor runs.
    let monitorRunning = Mutex(false)
    private let removesFileOnDeinit: Bool

    /// Opens (or creates) the database file at `path`.
    ///
    /// - Parameter busyTimeout: how long a write waits for another process's write to finish.
    /// - Throws: ``DepotError`` of kind `.storage` when the file is not a SQLite database or
    ///   cannot be opened for writing; the message names the path.
    public convenience init(path: String, busyTimeout: Duration = .seconds(10)) throws {
        try self.init(path: path, busyTimeout: busyTimeout, removesFileOnDeinit: false)
    }

    /// A private database in a new temporary file, deleted when the store is released:
    /// for tests and scratch work, with the same semantics as a file store.
    public static func temporary() throws -> SQLiteStore {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("depot-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try SQLiteStore(
            path: directory.appendingPathComponent("store.sqlite").path, busyTimeout: .seconds(10),
            removesFileOnDeinit: true)
    }

    private init(path: String, busyTimeout: Duration, removesFileOnDeinit: Bool) throws {
        self.path = path
        self.removesFileOnDeinit = removesFileOnDeinit
        var configuration = Configuration()
        configuration.busyMode = .timeout(
            TimeInterval(busyTimeout.components.seconds) + TimeInterval(busyTimeout.components.attoseconds) / 1e18)
        // Depot keeps a transaction open across several accesses of one `write { }` and ends it
        // itself, under its own lock.
        configuration.allowsUnsafeTransactions = true
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(in: db)
        }
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            // Touch the file so "not a database" surfaces now, not on the first query.
            _ = try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        } catch {
            throw SQLiteErrors.opening(path: path, error)
        }
    }

    deinit {
        if removesFileOnDeinit {
            try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        }
    }

    // MARK: - Reads

    public func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try query.validate()
        return try await self.read { db in
            guard let query = try query.resolved(exists: { try self.tableIsReady($0, in: db, create: false) }) else {
                return try StoredRowsCursor.empty(read)
            }
            let statement = self.renderer.select(query)
            let rows = try Self.emptyIfMissing(query.table, nil) {
                try SQLiteOperations.scan(statement, table: query.table, db: db, read)
            }
            return try rows ?? StoredRowsCursor.empty(read)
        }
    }

    public func count(_ query: SelectQuery) async throws -> Int {
        try query.validate()
        return try await read { db in
            guard let query = try query.resolved(exists: { try self.tableIsReady($0, in: db, create: false) }) else {
                return 0
            }
            let statement = self.renderer.count(query)
            return try Self.emptyIfMissing(query.table, 0) {
                try SQLiteOperations.count(statement, db: db)
            }
        }
    }

    /// Runs a read, answering `empty` when the table does not exist in the reader's snapshot: a
    /// read that began just before the transaction creating the table committed sees no table,
    /// which is an empty table, not an error.
    private static func emptyIfMissing<T>(_ table: TableDescription, _ empty: T, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.message == "no such table: \(table.name)" {
            return empty
        }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.read(body)
        } catch {
            throw SQLiteErrors.map(error, path: path)
        }
    }

    // MARK: - Transactions

    public func transaction<T: Sendable>(
        _ body: @Sendable (any StoreWriter) async throws -> T
    ) async throws -> T {
        await writeLock.lock()
        defer { writeLock.unlock() }
        try await runUncancelled { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        let writer = SQLiteWriter(store: self)
        let result: T
        do {
            result = try await body(writer)
            try await runUncancelled { db in try db.execute(sql: "COMMIT") }
        } catch {
            writer.end()
            try? await runUncancelled { db in
                if !db.isInsideTransaction { return }
                try db.execute(sql: "ROLLBACK")
            }
            throw SQLiteErrors.map(error, path: path)
        }
        let (touched, created) = writer.end()
        verifiedTables.withLock { $0.formUnion(created) }
        broadcaster.publish(StoreCommit(tables: touched))
        return result
    }

    /// Announces this store's commits and, while anyone listens, commits made to the same file by
    /// other connections or processes (seen through `PRAGMA data_version`, polled on the writer
    /// connection every `externalChangePollInterval`; such a notice names every table).
    public func commits() -> AsyncStream<StoreCommit> {
        let stream = broadcaster.subscribe()
        startExternalChangeMonitor()
        return stream
    }

    /// How often `PRAGMA data_version` is read while observers listen.
    public static let externalChangePollInterval: Duration = .milliseconds(50)

    private func startExternalChangeMonitor() {
        let start = monitorRunning.withLock { running -> Bool in
            if running { return false }
            running = true
            return true
        }
        guard start else { return }
        // The baseline is read now, before the subscriber can act: a commit by another process
        // right after subscribing must show up as a change, not as the starting point.
        let baseline = try? database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
        Task.detached { [weak self] in
            var last = baseline
            while let store = self {
                let keepGoing = store.monitorRunning.withLock { running -> Bool in
                    if store.broadcaster.subscriberCount == 0 { running = false }
                    return running
                }
                guard keepGoing else { return }
                try? await Task.sleep(for: SQLiteStore.externalChangePollInterval)
                let known = last
                let probe = try? await store.database.writeWithoutTransaction { db -> (Int, [String]) in
                    // data_version on the writer connection changes only for other connections' commits;
                    // the table names are read only then.
                    let version = try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
                    guard let known, known != version else { return (version, []) }
                    let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                    return (version, tables)
                }
                if let (version, tables) = probe {
                    if !tables.isEmpty { store.broadcaster.publish(StoreCommit(tables: Set(tables))) }
                    last = version
                }
            }
        }
    }

    /// Runs `body` on the writer connection even if the calling task is cancelled: beginning,
    /// committing and rolling back must not be skipped halfway.
    func runUncancelled(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        let database = database
        try await Task.detached {
            try await database.writeWithoutTransaction(body)
        }.value
    }

    /// Runs `body` on the writer connection; its errors arrive as ``DepotError``s, also inside a
    /// transaction's closure.
    func onWriter<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.writeWithoutTransaction(body)
        } catch {
            throw SQLiteErrors.map(error, path: path)
        }
    }

    // MARK: - Tables

    /// Whether `table` exists with the expected shape; creates it when `create` is true.
    ///
    /// - Throws: `.schemaMismatch` listing each difference when the stored table differs.
    func tableIsReady(_ table: TableDescription, in db: Database, create: Bool) throws -> Bool {
        if verifiedTables.withLock({ $0.contains(table) }) { return true }
        if try db.tableExists(table.name) {
            try SQLiteSchemaCheck.verify(table, in: db, dialect: renderer.dialect)
            verifiedTables.withLock { _ = $0.insert(table) }
            return true
        }
        guard create else { return false }
        try db.execute(sql: renderer.createTable(table))
        return true
    }
}

extension SQLiteStore: MigratableStore, SQLMigratableStore {
    public func applyMigrations(
        _ migrations: Migrations, to target: Int?, progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> MigrationOutcome {
        try await SQLMigrator.migrate(migrations, to: target, on: self, progress: progress)
    }

    public func appliedMigrations() async throws -> [AppliedMigration] {
        try await SQLMigrator.applied(on: self)
    }

    public func checkSchema(of entities: [any Entity.Type]) async throws {
        try await SQLMigrator.checkSchema(of: entities, on: self)
    }

    public func eraseDatabase() async throws {
        try await SQLMigrator.erase(on: self)
    }

    package func schemaChanged() {
        verifiedTables.withLock { $0.removeAll() }
    }

    package func verifyTable(_ table: TableDescription) async throws -> Bool {
        try await read { db in try self.tableIsReady(table, in: db, create: false) }
    }
}
