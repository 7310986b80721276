import DepotHTTP
import Foundation
import Hummingbird
import Logging

/// A Hummingbird server serving `router` on 127.0.0.1 (an ephemeral port), for tests that need a
/// real HTTP server: ``url`` once it listens, ``stop()`` to end it.
public final class LocalHTTPServer: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let url: URL
    /// The port it listens on.
    public let port: Int
    private let task: Task<Void, any Error>

    private init(url: URL, port: Int, task: Task<Void, any Error>) {
        self.url = url
        self.port = port
        self.task = task
    }

    /// Starts serving `router` and returns once the server listens.
    ///
    /// - Throws: `LocalHTTPServer.NotListening` when the server stopped before it listened.
    public static func start<Context: RequestContext>(_ router: Router<Context>) async throws -> LocalHTTPServer
    where Context.Source == ApplicationRequestContextSource {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: Logger(label: "test-http-server", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task {
            defer { continuation.finish() }
            try await app.run()
        }
        var port = 0
        for await bound in stream { port = bound }
        guard port > 0, let url = URL(string: "http://127.0.0.1:\(port)") else {
            task.cancel()
            throw NotListening()
        }
        return LocalHTTPServer(url: url, port: port, task: task)
    }

    /// Stops the server and waits until it has shut down.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }

    /// The server stopped before it listened.
    public struct NotListening: Error {
        /// The error.
        public init() {}
    }
}

/// The write token the tests' airports servers take (`AirportsServer.Access`), and their clients send.
public let testWriteToken = "test-write-token"

extension APIClient.Configuration {
    /// The defaults with a deadline of 10 minutes: an outer bound, not a speed (a test's server on
    /// a 2-core machine shared by every other suite has taken more than the default 30 s).
    public static var patient: APIClient.Configuration {
        var configuration = APIClient.Configuration()
        configuration.timeout = .seconds(600)
        return configuration
    }

    /// ``patient``, sending the test servers' write token.
    public static var writing: APIClient.Configuration {
        var configuration = patient
        configuration.headers["Authorization"] = "Bearer \(testWriteToken)"
        return configuration
    }
}
