import AirportsExample
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import DepotTestSupport
import DepotTesting
import Foundation
import InMemoryTracing
import Testing
import Tracing

@Suite("Airports tracing", .timeLimit(.minutes(10)))
struct AirportsTracingTests {
    @Test(
        "one airports sync is one trace: the client's requests, the server's spans under them (continued from the header fields), and both stores' statements"
    )
    func syncIsOneTrace() async throws {
        // The server reads the process-wide tracer (Hummingbird's TracingMiddleware); stores and
        // clients made after this point trace through it too.
        let tracer = TestTracing.bootstrapped
        try await withServer { server, _ in
            let local = try SQLiteStore.temporary()
            let engine = SyncEngine.airports(
                store: local, client: APIClient(baseURL: server.baseURL, configuration: .patient), pageSize: 10_000)
            let root = tracer.startRoot("airports sync")
            let summary = try await InstrumentationContext.withValue(root.context) { try await engine.sync() }
            root.end()
            #expect(summary.pulledRows == 28_298)
            #expect(summary.requests == 4)  // 3 pages of the copy, at most 10,000 each, then the changes

            // A server span ends once its response is written, which may be after the client has it.
            #expect(
                await eventually {
                    tracer.spans(ofTrace: root).filter { $0.kind == .server }.count == summary.requests
                })
            let spans = tracer.spans(ofTrace: root)
            let requests = spans.filter { $0.kind == .client && $0.parentSpanID == root.spanContext.spanID }
                .filter { $0.text("http.request.method") == "GET" }
            #expect(requests.count == summary.requests, "\(TraceTree(spans, root: root))")
            for request in requests {
                #expect(request.text("http.response.status_code") == "200")
                let served = spans.filter { $0.kind == .server && $0.parentSpanID == request.spanID }
                #expect(served.count == 1, "the server continued request \(request.text("url.full"))")
                guard let span = served.first else { continue }
                #expect(span.operationName.hasSuffix("/feed"), "\(span.operationName)")
                #expect(span.text("http.response.status_code") == "200")
                // The sync server's own span under the request's, the store's reads under it.
                let feed = spans.filter { $0.parentSpanID == span.spanID && $0.operationName == "sync feed airports" }
                #expect(feed.count == 1, "\(TraceTree(spans, root: root))")
                let reads = spans.filter {
                    $0.parentSpanID == feed.first?.spanID && $0.operationName.hasPrefix("SELECT")
                }
                #expect(!reads.isEmpty, "the server's store read under \(span.operationName)")
            }
            // The client stored each page in a transaction under the caller's span.
            let transactions = spans.filter {
                $0.operationName == "transaction" && $0.parentSpanID == root.spanContext.spanID
            }
            #expect(
                transactions.contains { transaction in
                    spans.contains { $0.parentSpanID == transaction.spanID && $0.operationName == "INSERT airports" }
                }, "\(TraceTree(spans, root: root))")
            print(TraceTree(spans, root: root))
        }
    }
}

/// A trace drawn as an indented tree, children in the order they started, for a failure message
/// and the closing note.
struct TraceTree: CustomStringConvertible {
    var spans: [FinishedInMemorySpan]
    var rootID: String
    var rootName: String

    init(_ spans: [FinishedInMemorySpan], root: InMemorySpan) {
        self.spans = spans
        rootID = root.spanContext.spanID
        rootName = root.operationName
    }

    var description: String {
        var lines = [rootName]
        draw(under: rootID, indent: "", into: &lines)
        return lines.joined(separator: "\n")
    }

    private func draw(under parent: String, indent: String, into lines: inout [String]) {
        let children = spans.filter { $0.parentSpanID == parent }
            .sorted { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }
        // A long run of statements (a transaction writing thousands of rows in batches) is drawn as
        // its first and last few and a count of the rest by name.
        var shown = children.map { Optional($0) }
        var summary = ""
        if children.count > 8 {
            var counts: [(name: String, count: Int)] = []
            for span in children[3..<(children.count - 3)] {
                if let index = counts.firstIndex(where: { $0.name == span.operationName }) {
                    counts[index].count += 1
                } else {
                    counts.append((span.operationName, 1))
                }
            }
            shown = children.prefix(3).map { $0 } + [nil] + children.suffix(3).map { $0 }
            summary = "… " + counts.map { "\($0.name) ×\($0.count)" }.joined(separator: ", ")
        }
        for (index, child) in shown.enumerated() {
            let last = index == shown.count - 1
            let branch = indent + (last ? "└─ " : "├─ ")
            guard let child else {
                lines.append(branch + summary)
                continue
            }
            lines.append(branch + label(child))
            draw(under: child.spanID, indent: indent + (last ? "   " : "│  "), into: &lines)
        }
    }

    private func label(_ span: FinishedInMemorySpan) -> String {
        var details: [String] = ["\(span.kind)"]
        if !span.text("url.full").isEmpty { details.append(span.text("url.full")) }
        if !span.text("http.response.status_code").isEmpty {
            details.append("status \(span.text("http.response.status_code"))")
        }
        if !span.text("db.response.returned_rows").isEmpty {
            details.append("\(span.text("db.response.returned_rows")) rows")
        }
        if span.status?.code == .error { details.append("error") }
        return "\(span.operationName) (\(details.joined(separator: ", ")))"
    }
}
