import Depot
import Tracing

/// Where a SQL store reports spans, through swift-distributed-tracing: one span per transaction
/// and one per statement, children of the span the caller is in.
///
/// | Span | Kind | Attributes (OpenTelemetry's database conventions) |
/// | --- | --- | --- |
/// | `transaction` | internal | `db.system.name` |
/// | `SELECT airports`, `INSERT airports`, `DELETE airports`, `BEGIN`, … | client | `db.system.name`, `db.operation.name`, `db.collection.name` (when one table), `db.query.text` (the SQL with placeholders, never values), `db.response.returned_rows`; a failure's error recorded and status `error` |
///
/// With swift-distributed-tracing's default no-op tracer the store makes no spans at all.
///
/// ```swift
/// InstrumentationSystem.bootstrap(tracer)                    // your tracer, once, at start
/// let store = try SQLiteStore(path: "app.sqlite")          // traces through it
/// try await withSpan("import") { _ in try await store.repository(Airport.self).upsert(list) }
/// // import → transaction → BEGIN, INSERT airports, COMMIT
/// ```
public struct SQLTracing: Sendable {
    /// The tracer spans go to; `nil` when nothing is traced.
    public var tracer: (any Tracer)?

    /// Spans through `tracer`.
    public init(tracer: any Tracer) {
        self.tracer = tracer
    }

    /// Spans through the tracer swift-distributed-tracing is bootstrapped with now (none with its
    /// default no-op tracer).
    public static var bootstrapped: SQLTracing {
        var tracing = SQLTracing(tracer: InstrumentationSystem.tracer)
        if tracing.tracer is NoOpTracer { tracing.tracer = nil }
        return tracing
    }

    /// Runs `body` inside a span named `name` when there is a tracer, the span's context being
    /// the current one meanwhile.
    package func span<R>(
        _ name: @autoclosure () -> String, kind: SpanKind, _ body: (any Span) async throws -> R
    ) async throws -> R {
        guard let tracer else { return try await body(NoOpTracer.NoOpSpan(context: .topLevel)) }
        let span = tracer.startAnySpan(name(), context: InstrumentationContext.current ?? .topLevel, ofKind: kind)
        defer { span.end() }
        do {
            return try await InstrumentationContext.withValue(span.context) { try await body(span) }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }
}
