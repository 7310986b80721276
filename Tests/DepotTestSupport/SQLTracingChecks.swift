import Depot
import DepotSQL
import DepotTesting
import InMemoryTracing
import Testing
import Tracing

/// The spans an SQL store reports (``SQLTracing``), checked the same way on SQLite and
/// PostgreSQL with an in-memory tracer: a transaction span under the caller's span, its
/// statements under it, a read's statement under the caller's span, and failures marked.
public enum SQLTracingChecks {
    /// Opens a fresh, empty store with `tracing`, runs the body on it and cleans up.
    public typealias Open<Engine: SQLEngine> = (
        _ tracing: SQLTracing, _ body: (SQLStore<Engine>) async throws -> Void
    ) async throws -> Void

    /// Checks the span tree of a write, a read and a failed write; `system` is `db.system.name`.
    public static func spanTree<Engine: SQLEngine>(system: String, _ open: Open<Engine>) async throws {
        let tracer = InMemoryTracer()
        try await open(SQLTracing(tracer: tracer)) { store in
            let airports = store.repository(TestAirport.self)
            let caller = tracer.startAnySpan("import airports", context: .topLevel, ofKind: .internal)
            let norwegian = try await InstrumentationContext.withValue(caller.context) {
                try await store.write { tx in try await tx.repository(TestAirport.self).insert(TestAirport.sample) }
                let norwegian = try await airports.fetch(where: \.country == "NO")
                _ = await #expect(throws: DepotError.self) { try await airports.insert([TestAirport.sample[0]]) }
                return norwegian
            }
            caller.end()
            let spans = tracer.finishedSpans
            let root = try #require(spans.first { $0.operationName == "import airports" })
            let transactions = spans.filter { $0.operationName == "transaction" && $0.parentSpanID == root.spanID }
            #expect(transactions.count == 2, "\(spans.map(\.operationName))")
            let first = try #require(transactions.first)
            #expect(first.attributes["db.system.name"]?.toSpanAttribute() == .string(system))
            let inFirst = spans.filter { $0.parentSpanID == first.spanID }.map(\.operationName)
            #expect(inFirst.first == "BEGIN", "\(inFirst)")
            #expect(inFirst.contains("INSERT airports"), "\(inFirst)")
            #expect(inFirst.last == "COMMIT", "\(inFirst)")

            let select = try #require(
                spans.first { $0.operationName == "SELECT airports" && $0.parentSpanID == root.spanID },
                "\(spans.map(\.operationName))")
            #expect(select.kind == .client)
            #expect(select.attributes["db.collection.name"]?.toSpanAttribute() == .string("airports"))
            #expect(select.attributes["db.operation.name"]?.toSpanAttribute() == .string("SELECT"))
            #expect(select.attributes["db.response.returned_rows"]?.toSpanAttribute() == .int64(Int64(norwegian.count)))
            let query = "\(select.attributes["db.query.text"]?.toSpanAttribute() ?? .string(""))"
            #expect(!query.contains("'NO'"), "no bound value in the query text: \(query)")

            let failed = try #require(transactions.last)
            #expect(failed.status?.code == .error)
            #expect(!failed.errors.isEmpty)
            let failedInsert = spans.first { $0.parentSpanID == failed.spanID && $0.operationName == "INSERT airports" }
            #expect(
                failedInsert?.status?.code == .error,
                "\(spans.filter { $0.parentSpanID == failed.spanID }.map(\.operationName))")
        }
    }
}
