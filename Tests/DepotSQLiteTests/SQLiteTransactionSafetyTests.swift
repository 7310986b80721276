import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
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

    @Test("a savepoint that cannot be rolled back fails the transaction loudly, and nothing commits")
    func unrollableSavepoint() async throws {
        let error = try await SQLTransactionChecks.unrollableSavepointBreaksTheTransaction(try SQLiteStore.temporary())
        #expect(error?.kind == .transaction)
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
