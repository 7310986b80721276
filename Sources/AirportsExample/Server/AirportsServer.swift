import Depot
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// The airports HTTP API over any Depot store, on Hummingbird.
///
/// | Request | Answer |
/// | --- | --- |
/// | `GET /airports?country=&q=&near=LAT,LON&min_elevation=&after=&limit=` | JSON array of airports |
/// | `GET /airports/{icao}` | one airport, or 404 |
/// | `PATCH /airports/{icao}` | applies a partial JSON body; answers the updated airport |
/// | `GET /dataset` | ``DatasetInfo``: the sync log's epoch and newest change, airport count |
/// | `GET /sync/airports/feed`, `POST /sync/airports/push` | DepotSyncServer's feed and push |
/// | `GET /sync/country/{code}/airports/feed`, `…/push` | the same for one country's airports |
///
/// Every filter and the order run in the store. A bad parameter or body answers 400 with
/// `{"error": "…"}` naming it; an unknown icao 404. With a tracer bootstrapped, each request is a
/// server span (Hummingbird's `TracingMiddleware`) that continues the trace the client sent.
///
/// ```swift
/// let server = try await AirportsServer.start(store: store)   // 127.0.0.1, an ephemeral port
/// print(server.baseURL)                                      // http://127.0.0.1:49152
/// await server.stop()
/// ```
public final class AirportsServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    private let task: Task<Void, any Error>

    private init(port: Int, baseURL: URL, task: Task<Void, any Error>) {
        self.port = port
        self.baseURL = baseURL
        self.task = task
    }

    /// What the server accepts, so that no client can make it hold more than this.
    public struct Limits: Sendable {
        /// How long a connection may stay idle before the server closes it.
        public var idleTimeout: Duration = .seconds(30)
        /// The most connections served at once; more wait in the listen queue.
        public var maximumConnections = 256
        /// The longest text a client may send (a member, a query parameter, a key), in Unicode
        /// scalars.
        public var maximumTextLength = 200
        /// How many changes the sync feed reaches back: older ones are dropped as new ones come (a
        /// client further behind copies in full).
        public var changeLogLength = 10_000

        /// The defaults: 30 s idle, 256 connections, 200-character texts, 10,000 changes.
        public init() {}

        /// Throws `DepotError` of kind `.invalidQuery` naming the first limit that is not positive
        /// (a server with no connection, no text or no change log to serve could only hang or lose
        /// changes).
        func validate() throws {
            let positive: [(String, Bool)] = [
                ("idleTimeout", idleTimeout > .zero), ("maximumConnections", maximumConnections > 0),
                ("maximumTextLength", maximumTextLength > 0), ("changeLogLength", changeLogLength > 0),
            ]
            if let (name, _) = positive.first(where: { !$0.1 }) {
                throw DepotError(.invalidQuery, "AirportsServer.Limits.\(name) must be positive")
            }
        }
    }

    /// Who may write (`PATCH /airports/{icao}`, sync pushes): holders of a write
    /// token, sent as `Authorization: Bearer TOKEN`. Reads are open. Without tokens the server is
    /// read-only: secure by default.
    public struct Access: Sendable {
        /// The tokens that allow writes; empty: nobody writes.
        public var writeTokens: Set<String>

        /// Writes allowed to holders of `writeTokens` (none by default: read-only).
        public init(writeTokens: Set<String> = []) { self.writeTokens = writeTokens }

        /// Nobody writes.
        public static let readOnly = Access()

        /// Refuses a request that may not write: 403 when the server takes no writes, 401 when the
        /// request carries no valid write token.
        func authorizeWrite(_ authorization: String?) throws {
            guard !writeTokens.isEmpty else {
                throw APIProblem(
                    status: .forbidden, message: "this server is read-only: start it with a write token to take writes")
            }
            guard let authorization, authorization.hasPrefix("Bearer ") else {
                throw APIProblem(status: .unauthorized, message: "a write needs Authorization: Bearer <write token>")
            }
            let token = Array(authorization.dropFirst("Bearer ".count).utf8)
            // Compared in full against each token, whatever matches first: no timing hints.
            var matched = false
            for candidate in writeTokens {
                let bytes = Array(candidate.utf8)
                var difference = UInt8(bytes.count == token.count ? 0 : 1)
                for index in 0..<min(bytes.count, token.count) { difference |= bytes[index] ^ token[index] }
                matched = matched || difference == 0
            }
            guard matched else { throw APIProblem(status: .unauthorized, message: "the write token is not valid") }
        }
    }

    /// Starts the API on `host:port` (port 0: any free one) and returns once it listens.
    ///
    /// - Throws: `DepotError` of kind `.connection` naming the address when the server cannot
    ///   listen there (the port is taken, the host is not this machine's); `.invalidQuery` naming
    ///   a limit that is not positive.
    public static func start(
        store: any Store, host: String = "127.0.0.1", port: Int = 0, limits: Limits = Limits(),
        access: Access = .readOnly
    ) async throws -> AirportsServer {
        let (bound, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await application(store: store, host: host, port: port, limits: limits, access: access) { port in
            continuation.yield(port)
            continuation.finish()
        }
        // A server that cannot bind never runs: its task ends, and so does the wait for its port.
        let task = Task {
            defer { continuation.finish() }
            try await app.run()
        }
        var listening = 0
        for await port in bound { listening = port }
        guard listening > 0, let url = URL(string: "http://\(host):\(listening)") else {
            task.cancel()
            let reason: String
            do {
                try await task.value
                reason = "it stopped before listening"
            } catch {
                reason = "\(error)"
            }
            throw DepotError(.connection, "the airports API could not listen on \(host):\(port): \(reason)")
        }
        return AirportsServer(port: listening, baseURL: url, task: task)
    }

    /// Stops listening and waits until the server has shut down.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// The Hummingbird application serving `store` (for `airports serve`, which runs it until
    /// SIGINT/SIGTERM). Opens the sync log (creating it when the store has none).
    public static func application(
        store: any Store, host: String = "127.0.0.1", port: Int = 0, limits: Limits = Limits(),
        access: Access = .readOnly, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        try limits.validate()
        let sync = try await syncServer(store: store, limits: limits, access: access)
        let router = Router(context: AirportsRequestContext.self)
        // Continues the caller's trace (W3C `traceparent` with an OpenTelemetry tracer): one server
        // span per request, under which the store's transaction and statement spans nest.
        router.middlewares.add(TracingMiddleware())
        router.middlewares.add(IncidentMiddleware())
        let controller = AirportsController(sync: sync, limits: limits, access: access)
        router.addRoutes(controller.routes)
        controller.addSyncRoutes(to: router)
        return Application(
            router: router, server: .http1(configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout))),
            configuration: .init(
                address: .hostname(host, port: port), serverName: "depot-airports",
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "airports-api", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}
