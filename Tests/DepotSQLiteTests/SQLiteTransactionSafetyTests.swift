import Depot
import DepotSQL
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import GRDB
import Testing

@Suite("SQLiteStore transactions the engine ends", .timeLimit(.minutes(10)))
struct SQLiteTransactionSafetyTests {
    @Test("UpdateMapper calls from two stores on one file at once lose no update")
    func noLostUpdates() async throws {
        // A minute's busy wait each: under a loaded CI run one store has waited past the default 10 s.
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let first = try SQLiteStore(path: path, busyTimeout: .seconds(60))
        let second = try SQLiteStore(path: path, busyTimeout: .seconds(60))
        let (stored, inserted) = try await ConcurrentStoreChecks.concurrentClimbs(first, second)
        #expect(stored == 24, "the stored row got every increment")
        #expect(inserted == 24, "the row inserted by the first caller got every later increment")
    }

    @Test("in a transaction whose task is cancelled, the next statement throws and nothing commits")
    func cancelledTransaction() async throws {
        // Statements run on the writer's own thread, not through GRDB's awaited (cancellable)
        // accesses: what GRDB checked before each access, the transaction's call permits and the
        // connection's own check (before each statement) check now.
        let store = try SQLiteStore.temporary()
        let airports = store.repository(TestAirport.self)
        let task = Task {
            try await store.write { tx in
                let first = TestAirport(icao: "ENGM", name: "Oslo", country: "NO")
                try await tx.repository(TestAirport.self).insert(first)
                withUnsafeCurrentTask { $0?.cancel() }
                let second = TestAirport(icao: "ENBR", name: "Bergen", country: "NO")
                try await tx.repository(TestAirport.self).insert(second)
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await airports.count() == 0, "nothing of the cancelled transaction commits")
        // The writer and its thread serve the next transaction.
        try await airports.insert(TestAirport(icao: "ENSB", name: "Svalbard", country: "NO"))
        #expect(try await airports.fetch().map(\.icao) == ["ENSB"])
    }

    // Cancellation's axes: the statement (a read, a write SQLite rolls back with the transaction,
    // a repository write inside its savepoint, a trigger's statement) × when the task is cancelled
    // (before a statement, between two, during one). Each ends in CancellationError, commits
    // nothing, and leaves the writer serving the next transaction.

    /// A statement that cancels its own task as it starts, then counts to 100 million (most of a
    /// minute here, unless interrupted): the cancellation lands while the statement is under way.
    static let cancelledMidStatement = """
        (SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT depot_test_cancel_task() UNION ALL \
        SELECT x + 1 FROM c WHERE x < 100000000) SELECT x FROM c))
        """

    /// A temporary store whose connections have `depot_test_cancel_task()`: it cancels the task
    /// whose statement calls it (a statement runs in its task, on the writer's thread or, for a
    /// read, on the calling thread).
    static func cancellingStore() async throws -> SQLiteStore {
        try SQLiteStore.temporary { db in
            db.add(
                function: DatabaseFunction("depot_test_cancel_task", argumentCount: 0, pure: false) { _ in
                    withUnsafeCurrentTask { $0?.cancel() }
                    return 1
                })
        }
    }

    /// Runs `body` in a transaction of `store`, in a task of its own, and expects the
    /// cancellation to be what it throws.
    static func expectCancellation(
        of body: @escaping @Sendable (Transaction) async throws -> Void, on store: SQLiteStore
    ) async {
        let task = Task { try await store.write(body) }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("a statement under way when its transaction's task is cancelled is interrupted, and nothing commits")
    func cancelledMidStatement() async throws {
        let store = try await Self.cancellingStore()
        let airports = store.repository(TestAirport.self)
        await Self.expectCancellation(
            of: { tx in
                try await tx.repository(TestAirport.self).insert(TestAirport(icao: "ENGM", name: "Oslo", country: "NO"))
                _ = try await tx.sql(SQL(stringLiteral: "SELECT " + Self.cancelledMidStatement))
            }, on: store)
        #expect(try await airports.count() == 0, "nothing of the cancelled transaction commits")
        try await airports.insert(TestAirport(icao: "ENSB", name: "Svalbard", country: "NO"))
        #expect(try await airports.fetch().map(\.icao) == ["ENSB"], "the writer serves the next transaction")
    }

    @Test("a read under way when its task is cancelled is interrupted, and the store reads on")
    func cancelledMidRead() async throws {
        let store = try await Self.cancellingStore()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport(icao: "ENGM", name: "Oslo", country: "NO"))
        // Reads run on the calling thread (no hop to GRDB's reader queue): the task's
        // cancellation must still stop the statement, not wait for its hundred million rows.
        let read = Task { try await store.rows(SQL(stringLiteral: "SELECT " + Self.cancelledMidStatement)) }
        await #expect(throws: CancellationError.self) { try await read.value }
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await airports.count()
        }
        await #expect(throws: CancellationError.self, "a task cancelled before its read") {
            try await cancelledFirst.value
        }
        #expect(try await airports.fetch().map(\.icao) == ["ENGM"], "the readers serve the next read")
    }

    @Test("a write SQLite interrupts (and so rolls back the whole transaction) reads as the cancellation")
    func cancelledMidWrite() async throws {
        let store = try await Self.cancellingStore()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport(icao: "ENGM", name: "Oslo", country: "NO"))
        await Self.expectCancellation(
            of: { tx in
                try await tx.repository(TestAirport.self).insert(
                    TestAirport(icao: "ENBR", name: "Bergen", country: "NO"))
                _ = try await tx.sql(
                    SQL(stringLiteral: "UPDATE airports SET name = 'gone' WHERE " + Self.cancelledMidStatement + " > 0")
                )
            }, on: store)
        #expect(try await airports.fetch().map(\.name) == ["Oslo"], "nothing of the cancelled transaction commits")
        try await airports.insert(TestAirport(icao: "ENSB", name: "Svalbard", country: "NO"))
        #expect(try await airports.count() == 2, "the writer serves the next transaction")
    }

    @Test("a repository write interrupted inside its savepoint reads as the cancellation, and nothing commits")
    func cancelledMidRepositoryWrite() async throws {
        let store = try await Self.cancellingStore()
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport(icao: "ENGM", name: "Oslo", country: "NO"))
        // The insert's own statement runs long: a trigger on the writer connection only.
        try await store.engine.database.writeWithoutTransaction { db in
            try db.execute(
                sql: "CREATE TEMP TRIGGER slow_insert AFTER INSERT ON airports BEGIN SELECT "
                    + Self.cancelledMidStatement + "; END")
        }
        await Self.expectCancellation(
            of: { tx in
                try await tx.repository(TestAirport.self).insert(
                    TestAirport(icao: "ENBR", name: "Bergen", country: "NO"))
            }, on: store)
        #expect(try await airports.fetch().map(\.icao) == ["ENGM"], "nothing of the cancelled transaction commits")
    }

    @Test("a savepoint that cannot be rolled back fails the transaction loudly, and nothing commits")
    func unrollableSavepoint() async throws {
        let error = try await SQLTransactionChecks.unrollableSavepointBreaksTheTransaction(try SQLiteStore.temporary())
        #expect(error?.kind == .transaction)
    }

    @Test("a store-level call is its own transaction: no savepoint, and a failure at its last row keeps none")
    func wholeCallsNeedNoSavepoint() async throws {
        let (logger, log) = CapturingLogHandler.logger(level: .trace)
        let store = try SQLiteStore.temporary(logging: SQLLogging(logger: logger, slowStatementThreshold: nil))
        try await SQLTransactionChecks.wholeCallsNeedNoSavepoint(store, log: log)
    }
}

@Suite("SQLiteStore logging", .timeLimit(.minutes(10)))
struct SQLiteLoggingTests {
    @Test("SQLiteStore logs", arguments: SQLLoggingChecks.behaviours)
    func logs(behaviour: String) async throws {
        try await SQLLoggingChecks.check(behaviour) { logging, body in
            try await body(try SQLiteStore.temporary(logging: logging))
        }
    }
}

@Suite("SQLiteStore metrics", .timeLimit(.minutes(10)))
struct SQLiteMetricsTests {
    @Test("SQLiteStore reports", arguments: SQLMetricsChecks.behaviours)
    func reports(behaviour: String) async throws {
        try await SQLMetricsChecks.check(behaviour, system: "sqlite") { metrics, body in
            try await body(try SQLiteStore.temporary(metrics: metrics))
        }
    }
}

@Suite("SQLiteStore tracing", .timeLimit(.minutes(10)))
struct SQLiteTracingTests {
    @Test("a transaction is a span under the caller's, its statements under it; a read's statement under the caller's")
    func spans() async throws {
        try await SQLTracingChecks.spanTree(system: "sqlite") { tracing, body in
            try await body(try SQLiteStore.temporary(tracing: tracing))
        }
    }
}
