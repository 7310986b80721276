import InMemoryTracing
import Tracing

/// An in-memory tracer that records only the traces a test starts: spans with no parent (every
/// store and client of the other tests, which run in the same process) are not recorded, so the
/// tracer can be swift-distributed-tracing's process-wide one without gathering every test's spans.
///
/// Code that reads the global instrument (Hummingbird's `TracingMiddleware`) needs it bootstrapped;
/// ``bootstrapped`` does that once per process.
///
/// ```swift
/// let tracer = TestTracing.bootstrapped
/// let root = tracer.startRoot("airports sync")
/// try await InstrumentationContext.withValue(root.context) { try await sync() }
/// root.end()
/// let spans = tracer.spans(ofTrace: root)
/// ```
public struct ScopedTracer: Tracer {
    /// Where the recorded spans go.
    public let recorder = InMemoryTracer(recordInjections: false, recordExtractions: false)

    /// A tracer that records nothing until a test starts a root with ``startRoot(_:)``.
    public init() {}

    /// Starts the root span of a trace this tracer records.
    public func startRoot(_ name: String) -> InMemorySpan {
        recorder.startSpan(name, context: .topLevel, ofKind: .internal)
    }

    /// The finished spans of `root`'s trace, in the order they ended.
    public func spans(ofTrace root: InMemorySpan) -> [FinishedInMemorySpan] {
        recorder.finishedSpans.filter { $0.traceID == root.spanContext.traceID }
    }

    /// Starts a recorded span when `context` belongs to a trace a test started, else one that
    /// records nothing.
    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> ScopedSpan {
        let parent = context()
        guard parent.inMemorySpanContext != nil else { return .ignored(NoOpTracer.NoOpSpan(context: parent)) }
        return .recorded(
            recorder.startSpan(
                operationName, context: parent, ofKind: kind, at: instant(), function: function, file: fileID,
                line: line))
    }

    /// Nothing to flush: spans are kept in memory.
    public func forceFlush() { recorder.forceFlush() }

    /// Puts a recorded span's trace and span identifiers into `carrier` (the in-memory tracer's fields).
    public func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        recorder.inject(context, into: &carrier, using: injector)
    }

    /// Reads trace and span identifiers from `carrier`, so a server span continues the client's trace.
    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        recorder.extract(carrier, into: &context, using: extractor)
    }
}

/// A span of a ``ScopedTracer``: recorded when it belongs to a trace a test started.
public enum ScopedSpan: Span {
    /// A span of a trace a test started.
    case recorded(InMemorySpan)
    /// A span nobody records.
    case ignored(NoOpTracer.NoOpSpan)

    private var span: any Span {
        switch self {
        case .recorded(let span): span
        case .ignored(let span): span
        }
    }

    /// The span's context.
    public var context: InstrumentationContext { span.context }

    /// The span's name.
    public var operationName: String {
        get { span.operationName }
        nonmutating set {
            if case .recorded(let span) = self { span.operationName = newValue }
        }
    }

    /// The span's attributes.
    public var attributes: SpanAttributes {
        get { span.attributes }
        nonmutating set {
            if case .recorded(let span) = self { span.attributes = newValue }
        }
    }

    /// Whether the span records.
    public var isRecording: Bool { span.isRecording }

    /// Sets the span's status.
    public func setStatus(_ status: SpanStatus) { span.setStatus(status) }

    /// Adds an event to the span.
    public func addEvent(_ event: SpanEvent) { span.addEvent(event) }

    /// Records an error on the span.
    public func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        span.recordError(error, attributes: attributes, at: instant())
    }

    /// Links another span.
    public func addLink(_ link: SpanLink) { span.addLink(link) }

    /// Ends the span.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { span.end(at: instant()) }
}

/// The process-wide test tracer.
public enum TestTracing {
    /// A ``ScopedTracer``, bootstrapped as swift-distributed-tracing's instrument the first time
    /// this is read (once per process: the library allows no second bootstrap).
    public static let bootstrapped: ScopedTracer = {
        let tracer = ScopedTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()
}

extension FinishedInMemorySpan {
    /// The span's attribute `name` as text (`""` when absent), for comparisons in tests.
    public func text(_ name: String) -> String {
        switch attributes[name]?.toSpanAttribute() {
        case nil: ""
        case .string(let text): text
        case .int64(let number): "\(number)"
        case .int32(let number): "\(number)"
        case .double(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        case let other?: "\(other)"
        }
    }
}
