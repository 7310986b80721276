import DepotHTTP
import Foundation

/// What `/echo` answers: the request as the server saw it.
struct Echo: Codable, Sendable, Equatable {
    var method: String
    var path: String
    /// The raw query string, as sent.
    var query: String?
    /// The query items, percent-decoded by the server.
    var items: [[String]]
    /// Header values by lowercased name (repeated fields joined by ", ").
    var headers: [String: String]
    var body: String
}

struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

struct Team: Codable, Sendable, Equatable {
    var name: String
    var members: [User]
}

/// `/echo` with any method, query, headers and body.
struct EchoEndpoint: Endpoint {
    typealias Response = Echo
    var method: HTTPMethod = .get
    var path = "/echo"
    var query: [URLQueryItem] = []
    var headers: HeaderFields = [:]
    var body: RequestBody = .empty
}

/// An endpoint of any path answering `Void` (the body ignored).
struct Call: Endpoint {
    typealias Response = Void
    var method: HTTPMethod = .get
    var path: String
    var query: [URLQueryItem] = []
    var isIdempotent: Bool
    var timeout: Duration?

    init(
        _ method: HTTPMethod = .get, _ path: String, query: [URLQueryItem] = [], idempotent: Bool? = nil,
        timeout: Duration? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.isIdempotent = idempotent ?? method.isIdempotent
        self.timeout = timeout
    }
}

/// An endpoint of any path answering its raw bytes.
struct Bytes: Endpoint {
    typealias Response = Data
    var path: String
    var query: [URLQueryItem] = []
    var timeout: Duration?
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

/// The deterministic bytes `/large` serves.
func largeBody(_ count: Int) -> Data {
    let pattern = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
    var data = Data(count: count)
    for index in 0..<count { data[index] = pattern[index % pattern.count] }
    return data
}

/// Waits `milliseconds` even in a cancelled task, without spinning: for test code that must
/// ignore cancellation (a `try? await Task.sleep` loop would return at once, every time, and
/// hold a thread of the 2-thread cooperative pool until it ends).
func sleepIgnoringCancellation(milliseconds: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
    }
}

extension APIClient.Configuration {
    /// A test's client settings: the defaults, but a call's deadline is an outer bound of 600 s,
    /// not a speed (a stubbed call that waited more than the default 30 s for a thread of the
    /// 2-thread cooperative pool, beside a CI build, failed a clean run). A test of deadlines
    /// passes its own `timeout`.
    static func testing(
        headers: HeaderFields = ["Accept": "application/json"], timeout: Duration = .seconds(600),
        retryPolicy: RetryPolicy = RetryPolicy(), middleware: [any Middleware] = []
    ) -> Self {
        Self(headers: headers, timeout: timeout, retryPolicy: retryPolicy, middleware: middleware)
    }
}
