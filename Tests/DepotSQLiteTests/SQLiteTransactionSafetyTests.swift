import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Testing

@Suite("SQLiteStore transactions the engine ends", .timeLimit(.minutes(10)))
struct SQLiteTransactionSafetyTests {
    @Test("UpdateMapper calls from two stores on one file at once lose no update")
    func noLostUpdates() async throws {
        let first = try SQLiteStore.temporary()
        let second = try SQLiteStore(path: first.path)
        try await ConcurrentStoreChecks.updateMapperLosesNoUpdate(first, second)
    }

    @Test("a savepoint that cannot be rolled back fails the transaction loudly, and nothing commits")
    func unrollableSavepoint() async throws {
        try await SQLTransactionChecks.unrollableSavepointBreaksTheTransaction(try SQLiteStore.temporary())
    }
}
