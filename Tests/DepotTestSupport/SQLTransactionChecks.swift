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

    /// A store-level call is its whole transaction: its batch runs without a savepoint (its
    /// rollback undoes it), and one that fails at its last row writes nothing. A call inside
    /// `store.write { … }` keeps its savepoint, so the transaction goes on after it fails.
    /// `store` logs every statement to `log` (a trace logger).
    public static func wholeCallsNeedNoSavepoint<Engine: SQLEngine>(
        _ store: SQLStore<Engine>, log: CapturingLogHandler.Store
    ) async throws {
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.numbered(1))
        func savepoints() -> Int {
            log.lines.filter { $0.message.hasPrefix("SAVEPOINT") }.count
        }
        log.clear()
        try await airports.insert(Array(TestAirport.numbered(4).dropFirst()))
        #expect(savepoints() == 0, "\(log.lines.map(\.message))")
        #expect(log.lines.contains { $0.message.hasPrefix("INSERT") }, "the statements are logged")

        // The last row collides with a stored key: none of the call's rows is kept.
        let failing = TestAirport.numbered(7).suffix(3) + [TestAirport.numbered(1)[0]]
        await #expect(throws: DepotError.self) { try await airports.insert(Array(failing)) }
        #expect(try await airports.count() == 4, "a failed whole call writes nothing")

        // Inside a transaction each call is a savepoint: the failed one is undone, the rest commits.
        log.clear()
        try await store.write { tx in
            let inner = tx.repository(TestAirport.self)
            await #expect(throws: DepotError.self) { try await inner.insert(Array(failing)) }
            try await inner.insert(Array(TestAirport.numbered(6).suffix(2)))
        }
        #expect(savepoints() >= 2, "\(log.lines.map(\.message))")
        #expect(try await airports.count() == 6)

        // Something between the call and the store that catches its failed write and goes on
        // (a wrapper store): rows before the failing one must not commit.
        let schema = TestAirport.schema
        let partly = TestAirport.numbered(9).suffix(2) + [TestAirport.numbered(1)[0]]
        let error = await #expect(throws: DepotError.self) {
            try await StoreCall.$ownsTransaction.withValue(true) {
                try await store.transaction { writer in
                    _ = try? await writer.write(
                        RowBatch(columns: schema.table.columns.map(\.name), values: partly.flatMap(schema.values(of:))),
                        into: schema.table, mode: .insert)
                }
            }
        }
        #expect(error?.kind == .transaction, "\(String(describing: error))")
        #expect(try await airports.count() == 6, "nothing of a whole call whose write failed commits")
    }
}
