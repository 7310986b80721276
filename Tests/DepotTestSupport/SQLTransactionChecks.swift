import Depot
import DepotSQL
import DepotTesting
import Testing

/// Checks of what an SQL store does when the engine itself undoes or refuses part of a
/// transaction: cases the conformance suite cannot provoke through the repository API, run by
/// the SQLite and PostgreSQL test targets on their own stores.
public enum SQLTransactionChecks {
    private struct CallFailed: Error {}

    /// A call whose savepoint cannot be rolled back (someone released it underneath) breaks the
    /// transaction: the error says so, later calls fail, and nothing the transaction wrote commits.
    /// Returns the error the transaction ended with, for the caller's own assertion.
    @discardableResult
    public static func unrollableSavepointBreaksTheTransaction<Engine: SQLEngine>(
        _ store: SQLStore<Engine>
    ) async throws -> DepotError? {
        let error = await #expect(throws: DepotError.self) {
            try await store.transaction { writer in
                let sql = try #require(writer as? SQLWriter<Engine>)
                try await writer.write(
                    RowBatch(columns: ["station", "sequence", "value"], values: [.text("kept?"), .integer(1), .null]),
                    into: Reading.schema.table, mode: .insert)
                do {
                    _ = try await writer.savepoint { inner -> Int in
                        try await inner.write(
                            RowBatch(
                                columns: ["station", "sequence", "value"],
                                values: [.text("undone?"), .integer(2), .null]),
                            into: Reading.schema.table, mode: .insert)
                        // Release every savepoint of the transaction: the undo below cannot happen.
                        try await sql.execute(SQLStatement(sql: "RELEASE SAVEPOINT depot_1"))
                        throw CallFailed()
                    }
                } catch is CallFailed {
                    Issue.record("the failed undo was not reported")
                } catch let error as DepotError {
                    #expect(error.kind == .transaction)
                    #expect(error.message.contains("could not be undone"), "\(error.message)")
                }
                // The body goes on as if nothing happened: the commit must still be refused.
            }
        }
        #expect(try await store.repository(Reading.self).count() == 0, "nothing of the broken transaction commits")
        // The store works afterwards.
        try await store.repository(Reading.self).insert(Reading(station: "after", sequence: 1, value: nil))
        #expect(try await store.repository(Reading.self).count() == 1)
        return error
    }
}
