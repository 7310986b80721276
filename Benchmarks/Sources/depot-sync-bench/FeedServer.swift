import BenchHarness
import DepotHTTP
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The airports feed (`GET /feed`, as the example's server answers it) on a Hummingbird server on
/// 127.0.0.1, in this process, so the client's work is measured rather than a server's: each copy
/// page's airports are encoded once, at start, and only the page's envelope (its cursor) per
/// request.
///
/// Without a cursor a full copy starts (airports in icao order, `limit` per page, cursors
/// `copy:E:R:ICAO`); the page that ends it answers `changes:E:R` and `more: true`, and the change
/// pages after it carry the partial records changed since revision R (``change(_:)``). Pages hold
/// the page size the feed was built with, whatever `limit` asks (the bench asks for the same).
final class FeedServer: Sendable {
    /// The port the server listens on.
    let port: Int
    private let task: Task<Void, any Error>

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    /// The feed's state: the copy's pages, encoded, and the change log.
    final class Feed: Sendable {
        static let epoch = "bench"
        let pageSize: Int
        /// Each copy page's `airports` array as JSON, its last icao and its airport count, by the
        /// icao the page starts after ("" for the first).
        let pages: [String: (json: ByteBuffer, last: String, count: Int)]
        /// The last airport's icao: a full last page is followed by an empty one.
        let lastKey: String
        /// The changes since the copy (revision = position + 1): partial records.
        let log = Mutex<[AirportRecord]>([])

        init(airports: [SyncAirport], pageSize: Int) throws {
            self.pageSize = pageSize
            let sorted = airports.sorted { $0.icao < $1.icao }
            let encoder = JSONEncoder()
            var pages: [String: (json: ByteBuffer, last: String, count: Int)] = [:]
            var start = 0
            var after = ""
            while start < sorted.count {
                let slice = sorted[start..<min(start + pageSize, sorted.count)]
                let json = try encoder.encode(slice.map(AirportRecord.init))
                let last = slice.last?.icao ?? after
                pages[after] = (ByteBuffer(bytes: json), last, slice.count)
                after = last
                start += pageSize
            }
            self.pages = pages
            self.lastKey = after
        }

        /// The body answering `cursor`, or nil for a cursor this feed never gave.
        func page(cursor: String?) throws -> ByteBuffer? {
            guard let cursor else {
                return try copyPage(revision: log.withLock { $0.count }, after: "")
            }
            let parts = cursor.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 3, parts[1] == Self.epoch, let revision = Int(parts[2]) else { return nil }
            switch (parts[0], parts.count) {
            case ("copy", 4): return try copyPage(revision: revision, after: parts[3])
            case ("changes", 3): return try changesPage(since: revision)
            default: return nil
            }
        }

        private func copyPage(revision: Int, after: String) throws -> ByteBuffer? {
            let page: (json: ByteBuffer, last: String, count: Int)
            if let found = pages[after] {
                page = found
            } else if after == lastKey {
                page = (ByteBuffer(string: "[]"), lastKey, 0)
            } else {
                return nil
            }
            // A page of fewer than `limit` airports ends the copy: next, the changes since it began.
            let cursor =
                page.count < pageSize
                ? "changes:\(Self.epoch):\(revision)" : "copy:\(Self.epoch):\(revision):\(page.last)"
            var body = ByteBuffer(string: #"{"airports":"#)
            var json = page.json
            body.writeBuffer(&json)
            body.writeString(#","deleted":[],"cursor":"#)
            body.writeBytes(try JSONEncoder().encode(cursor))
            body.writeString(#","more":true,"expired":false}"#)
            return body
        }

        private func changesPage(since revision: Int) throws -> ByteBuffer {
            let (records, head) = log.withLock { log in
                (Array(log.dropFirst(revision).prefix(pageSize)), min(log.count, revision + pageSize))
            }
            let response = FeedResponse(
                airports: records, deleted: [], cursor: "changes:\(Self.epoch):\(head)",
                more: records.count == pageSize, expired: false)
            return ByteBuffer(bytes: try JSONEncoder().encode(response))
        }

        /// Records a change on the server: the next change page carries `record`.
        func change(_ record: AirportRecord) { log.withLock { $0.append(record) } }
    }

    /// Starts serving `feed` on an ephemeral port of 127.0.0.1.
    static func start(_ feed: Feed) async throws -> FeedServer {
        let router = Router()
        router.get("/feed") { request, _ -> Response in
            guard let body = try feed.page(cursor: request.uri.queryParameters.get("cursor")) else {
                return Response(status: .badRequest)
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: body))
        }
        router.post("/airports/:icao/changes") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: Logger(label: "depot-sync-bench.server") { _ in SwiftLogNoOpLogHandler() })
        let task = Task { try await app.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            _ = await task.result
            throw BenchError(description: "the feed server did not start")
        }
        return FeedServer(port: port, task: task)
    }

    /// Stops the server and waits until it has.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// Counts the requests sent through `base` (the engine's `SyncReport.requests` leaves out the
/// client's retries; this counts every exchange).
final class CountingTransport: Transport {
    let base: any Transport
    private let sent = Atomic<Int>(0)

    init(_ base: any Transport) { self.base = base }

    /// Requests sent so far.
    var count: Int { sent.load(ordering: .relaxed) }

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        sent.add(1, ordering: .relaxed)
        return try await base.send(request, maximumBodySize: maximumBodySize)
    }

    func send(_ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption) async throws
        -> TransportResponse
    {
        sent.add(1, ordering: .relaxed)
        return try await base.send(request, maximumBodySize: maximumBodySize, interruption: interruption)
    }
}
