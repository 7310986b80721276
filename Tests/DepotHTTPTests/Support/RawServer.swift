import DepotTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A bare SwiftNIO HTTP/1.1 server on 127.0.0.1 for what a framework will not do on purpose:
/// - `/drop…`: closes the connection without answering, once the whole request has arrived;
/// - `/reset…`: the same, but with a TCP reset (`SO_LINGER` 0) rather than an orderly close;
/// - `/drop-mid-body`: sends a head promising 1,000 bytes, 100 of them, then closes;
/// - `/chunked-truncated`: sends three chunks of 500 bytes, then closes without the last (empty)
///   chunk that ends a chunked body;
/// - `/trickle?bytes=N&step=S&every=MS`: announces `N` bytes of ``largeBody(_:)`` and sends them
///   `S` at a time, one piece every `MS` milliseconds, until done or the client closes;
/// - `/burst/<id>/502/504…`: the n-th request for that path answers the n-th status listed (no
///   `Retry-After`, no body), every later one 200;
/// - `/hang/<id>`: never answers, and signals when the request arrived and when the client closed
///   the connection;
/// - `/headers`: answers the request's header fields as a JSON object (name → value): another
///   origin (another port) than the Hummingbird test server, for redirects that leave it.
final class RawServer: Sendable {
    let port: Int
    let baseURL: URL
    private let events: Events

    /// What arrived: hits and body sizes by path, and a signal for each `/hang/<id>` connection
    /// opened and closed by the client.
    final class Events: Sendable {
        private let hitCounts = Mutex<[String: Int]>([:])
        private let bodySizes = Mutex<[String: [Int]]>([:])
        private let signals = Mutex<[String: (opened: Signal, closed: Signal)]>([:])
        func hit(_ path: String) { hitCounts.withLock { $0[path, default: 0] += 1 } }
        func hits(_ path: String) -> Int { hitCounts.withLock { $0[path, default: 0] } }
        func received(_ path: String, bodyBytes: Int) { bodySizes.withLock { $0[path, default: []].append(bodyBytes) } }
        func bodySizes(_ path: String) -> [Int] { bodySizes.withLock { $0[path, default: []] } }
        func opened(_ id: String) { signals(id).opened.fire() }
        func closed(_ id: String) { signals(id).closed.fire() }
        func signals(_ id: String) -> (opened: Signal, closed: Signal) {
            signals.withLock { all in
                if let pair = all[id] { return pair }
                let pair = (opened: Signal(), closed: Signal())
                all[id] = pair
                return pair
            }
        }
    }

    private init(port: Int, baseURL: URL, events: Events) {
        self.port = port
        self.baseURL = baseURL
        self.events = events
    }

    /// How many requests for `path` (query included) arrived.
    func hits(_ path: String) -> Int { events.hits(path) }
    /// The size of each whole request body that arrived for `path` (query included), in order.
    func bodySizes(_ path: String) -> [Int] { events.bodySizes(path) }
    /// Returns once the request `/hang/<id>` has arrived (at once if it had).
    func opened(_ id: String) async { await events.signals(id).opened.wait() }
    /// Returns once the client has closed the connection of `/hang/<id>` (at once if it had).
    func closed(_ id: String) async { await events.signals(id).closed.wait() }

    private static let starting = Task { try await start() }

    /// The server, started on first use.
    static func shared() async throws -> RawServer { try await starting.value }

    private static let startingUnkept = Task { try await start() }

    /// A second server, started on first use, to which no transport keeps a connection open, so
    /// that every request opens a new one: ask it only for `/drop…` and `/reset…`, which close
    /// every connection they are sent on.
    static func unkept() async throws -> RawServer { try await startingUnkept.value }

    private static func start() async throws -> RawServer {
        let events = Events()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(events: events))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port, let url = URL(string: "http://127.0.0.1:\(port)") else {
            throw LocalHTTPServer.NotListening()
        }
        return RawServer(port: port, baseURL: url, events: events)
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let events: Events
        var path = ""
        var hangID: String?
        var headers: [String: String] = [:]
        var bodyBytes = 0

        init(events: Events) { self.events = events }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                path = head.uri
                bodyBytes = 0
                headers = Dictionary(head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $0 + ", " + $1 })
                events.hit(path)
                if path.hasPrefix("/hang/") {
                    let id = String(path.dropFirst("/hang/".count))
                    hangID = id
                    events.opened(id)
                }
            case .body(let part):
                bodyBytes += part.readableBytes
            case .end:
                events.received(path, bodyBytes: bodyBytes)
                respond(context: context)
            }
        }

        private func respond(context: ChannelHandlerContext) {
            if path.hasPrefix("/not-modified") || path.hasPrefix("/announce-large") {
                // A 304 (or a HEAD's 200) repeats the length of a body it does not send.
                let status: HTTPResponseStatus = path.hasPrefix("/not-modified") ? .notModified : .ok
                let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Content-Length": "10000000"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else if path.hasPrefix("/chunked-truncated") {
                let head = HTTPResponseHead(
                    version: .http1_1, status: .ok, headers: ["Transfer-Encoding": "chunked"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                for _ in 0..<3 {
                    context.write(
                        wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "x"), count: 500)))),
                        promise: nil)
                }
                context.flush()
                context.close(promise: nil)
            } else if path.hasPrefix("/chunked") {
                // 5,000 bytes in ten chunks, no length announced.
                let head = HTTPResponseHead(
                    version: .http1_1, status: .ok, headers: ["Transfer-Encoding": "chunked"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                for _ in 0..<10 {
                    context.write(
                        wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "x"), count: 500)))),
                        promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else if path.hasPrefix("/trickle") {
                trickle(context: context)
            } else if path.hasPrefix("/burst/") {
                burst(context: context)
            } else if path.hasPrefix("/reset") {
                reset(context: context)
            } else if path.hasPrefix("/drop-mid-body") {
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "1000")
                let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "x"), count: 100)))),
                    promise: nil)
                context.close(promise: nil)
            } else if path.hasPrefix("/headers") {
                let body = (try? JSONSerialization.data(withJSONObject: headers)) ?? Data("{}".utf8)
                var fields = HTTPHeaders()
                fields.add(name: "Content-Type", value: "application/json")
                fields.add(name: "Content-Length", value: "\(body.count)")
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))),
                    promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else if path.hasPrefix("/drop") {
                context.close(promise: nil)
            } else if hangID == nil {
                let head = HTTPResponseHead(version: .http1_1, status: .notFound, headers: ["Content-Length": "0"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        /// The query items of the request's URI.
        private var query: [String: String] {
            TestServer.items(URLComponents(string: path)?.percentEncodedQuery)
        }

        private func trickle(context: ChannelHandlerContext) {
            let query = query
            let body = largeBody(Int(query["bytes"] ?? "") ?? 100)
            let step = max(1, Int(query["step"] ?? "") ?? 1)
            let every = TimeAmount.milliseconds(Int64(query["every"] ?? "") ?? 10)
            var fields = HTTPHeaders()
            fields.add(name: "Content-Length", value: "\(body.count)")
            context.writeAndFlush(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))), promise: nil)
            send(body[...], step: step, every: every, context: context)
        }

        /// Sends the first `step` bytes of `rest` now, and the others later, one piece every `every`.
        private func send(_ rest: Data.SubSequence, step: Int, every: TimeAmount, context: ChannelHandlerContext) {
            guard context.channel.isActive else { return }
            guard !rest.isEmpty else {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let piece = rest.prefix(step)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: piece)))), promise: nil)
            context.eventLoop.assumeIsolated().scheduleTask(in: every) {
                self.send(rest.dropFirst(piece.count), step: step, every: every, context: context)
            }
        }

        private func burst(context: ChannelHandlerContext) {
            let statuses = path.split(separator: "/").dropFirst(2).compactMap { Int($0) }
            let attempt = events.hits(path)
            let code = attempt <= statuses.count ? statuses[attempt - 1] : 200
            let head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: code), headers: ["Content-Length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        /// Closes with a TCP reset: `SO_LINGER` 0 makes `close` discard the connection at once.
        private func reset(context: ChannelHandlerContext) {
            guard let socket = context.channel as? any SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let hangID { events.closed(hangID) }
            context.fireChannelInactive()
        }
    }
}
