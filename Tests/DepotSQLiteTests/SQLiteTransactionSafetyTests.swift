import Depot
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Testing

@Suite("SQLiteStore transactions the engine ends", .timeLimit(.minutes(2)))
struct SQLiteTransactionSafetyTests {
    @Test("a savepoint that cannot be rolled back fails the transaction loudly, and nothing commits")
    func unrollableSavepoint() async throws {
        try await SQLTransactionChecks.unrollableSavepointBreaksTheTransaction(try SQLiteStore.temporary())
    }
}
