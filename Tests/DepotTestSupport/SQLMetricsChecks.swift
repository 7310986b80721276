import Depot
import DepotSQL
import DepotTesting
import MetricsTestKit
import Testing

/// What an SQL store reports through swift-metrics (``SQLMetrics``), checked the same way on
/// SQLite and PostgreSQL: each check opens its own store through `open` with a test factory.
public enum SQLMetricsChecks {
    /// Opens a fresh, empty store with `metrics`, runs the body on it and cleans up.
    public typealias Open<Engine: SQLEngine> = (
        _ metrics: SQLMetrics, _ body: (SQLStore<Engine>) async throws -> Void
    ) async throws -> Void

    private struct Refused: Error {}

    /// The checks by the behaviour each pins down: a test's arguments.
    public static let behaviours = [
        "statements are counted and timed by operation; rows read and written are counted",
        "commits and rollbacks are counted and timed, and so is the wait for the write lock",
        "a failed statement is counted by its error's kind",
        "observers' re-queries are counted and timed, with their latency from the commit",
    ]

    /// Runs the check for `behaviour` (one of ``behaviours``) on stores `open` gives; `system` is
    /// the store's `system` dimension.
    public static func check<Engine: SQLEngine>(_ behaviour: String, system: String, _ open: Open<Engine>)
        async throws
    {
        let metrics = TestMetrics()
        let base = [("system", system), ("db", "checks")]
        try await open(SQLMetrics(factory: metrics, dimensions: [("db", "checks")])) { store in
            switch behaviours.firstIndex(of: behaviour) {
            case 0: try await statementsAndRows(store, metrics, base)
            case 1: try await transactions(store, metrics, base)
            case 2: try await failures(store, metrics, base)
            case 3: try await observation(store, metrics, base)
            default: Issue.record("no metrics check pins down '\(behaviour)'")
            }
        }
    }

    static func statementsAndRows<Engine: SQLEngine>(
        _ store: SQLStore<Engine>, _ metrics: TestMetrics, _ base: [(String, String)]
    ) async throws {
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        #expect(
            metrics.counterTotal(label: "depot_rows_written_total", dimensions: base) == Int64(TestAirport.sample.count)
        )
        let selects = base + [("operation", "select")]
        let before = metrics.counterTotal(label: "depot_statements_total", dimensions: selects)
        let norwegian = try await airports.fetch(where: \.country == "NO")
        #expect(metrics.counterTotal(label: "depot_statements_total", dimensions: selects) == before + 1)
        #expect(metrics.counterTotal(label: "depot_rows_read_total", dimensions: base) >= Int64(norwegian.count))
        let timer = try metrics.expectTimer("depot_statement_duration_seconds", selects)
        #expect(!timer.values.isEmpty && timer.values.allSatisfy { $0 >= 0 })
        _ = try await airports.count(where: \.country == "NO")
        #expect(
            metrics.counterTotal(label: "depot_statements_total", dimensions: base + [("operation", "count")]) >= 1)
        #expect(
            try await airports.remove(where: \.country == "US")
                == TestAirport.sample.filter { $0.country == "US" }.count)
        #expect(
            metrics.counterTotal(label: "depot_rows_written_total", dimensions: base)
                == Int64(TestAirport.sample.count + TestAirport.sample.filter { $0.country == "US" }.count))
    }

    static func transactions<Engine: SQLEngine>(
        _ store: SQLStore<Engine>, _ metrics: TestMetrics, _ base: [(String, String)]
    ) async throws {
        try await store.write { tx in try await tx.repository(TestAirport.self).insert(TestAirport.sample) }
        let commits = metrics.counterTotal(
            label: "depot_transactions_total", dimensions: base + [("outcome", "commit")])
        #expect(commits >= 1)
        await #expect(throws: Refused.self) {
            try await store.write { tx in
                _ = try await tx.repository(TestAirport.self).removeAll()
                throw Refused()
            }
        }
        #expect(
            metrics.counterTotal(label: "depot_transactions_total", dimensions: base + [("outcome", "rollback")]) == 1)
        #expect(try metrics.expectTimer("depot_transaction_duration_seconds", base).values.count >= 2)
        #expect(try metrics.expectTimer("depot_write_lock_wait_seconds", base).values.count >= 2)
        #expect(try await store.repository(TestAirport.self).count() == TestAirport.sample.count)
    }

    static func observation<Engine: SQLEngine>(
        _ store: SQLStore<Engine>, _ metrics: TestMetrics, _ base: [(String, String)]
    ) async throws {
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        var results = airports.observe(where: \.country == "NO").makeAsyncIterator()
        let first = try #require(try await results.next())
        #expect(metrics.counterTotal(label: "depot_observation_requeries_total", dimensions: base) == 1)
        #expect(
            try metrics.expectTimer("depot_observation_latency_seconds", base).values.isEmpty,
            "a first result follows no commit")
        try await airports.insert(TestAirport(icao: "QQQQ", name: "Added", country: "NO"))
        let second = try #require(try await results.next())
        #expect(second.count == first.count + 1)
        #expect(metrics.counterTotal(label: "depot_observation_requeries_total", dimensions: base) == 2)
        let requeries = try metrics.expectTimer("depot_observation_requery_duration_seconds", base)
        #expect(requeries.values.count == 2 && requeries.values.allSatisfy { $0 >= 0 })
        let latency = try metrics.expectTimer("depot_observation_latency_seconds", base)
        #expect(latency.values.count == 1 && latency.values.allSatisfy { $0 > 0 })
    }

    static func failures<Engine: SQLEngine>(
        _ store: SQLStore<Engine>, _ metrics: TestMetrics, _ base: [(String, String)]
    ) async throws {
        let airports = store.repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        let error = await #expect(throws: DepotError.self) { try await airports.insert([TestAirport.sample[0]]) }
        let kind = try #require(error?.kind.description)
        #expect(metrics.counterTotal(label: "depot_errors_total", dimensions: base + [("kind", kind)]) == 1)
    }
}
