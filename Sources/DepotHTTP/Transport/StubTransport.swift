import Foundation
import Synchronization

/// A ``Transport`` for tests: canned responses per endpoint, immediate or delayed, a failing
/// mode, and a record of every request. A request nothing was stubbed for fails loudly.
///
/// ```swift
/// let stub = StubTransport()
/// stub.stub(GetUser(id: 1), .json(User(id: 1, name: "Ada")))
/// stub.stub(.get, "/slow", .status(200, after: .seconds(2)))
/// stub.stub(.get, "/me", .status(401), .json(User(id: 1, name: "Ada")))  // then success
/// let client = APIClient(baseURL: URL(string: "https://api.test")!, transport: stub)
///
/// let user = try await client.send(GetUser(id: 1))
/// #expect(stub.requests.map(\.url.path) == ["/users/1"])
/// ```
///
/// Responses stubbed together are returned in order, the last one repeating. Stubs match by
/// method and path (the end of the URL's path, so a base URL's own path does not matter).
public final class StubTransport: Transport {
    /// A canned answer.
    public struct Stub: Sendable {
        enum Outcome: Sendable {
            case response(TransportResponse)
            case failure(any Error)
        }

        let outcome: Outcome
        let delay: Duration?

        /// A response with `status`, `body` and `headers`, after `delay` when given.
        public static func status(
            _ status: Int, body: Data = Data(), headers: HeaderFields = [:], after delay: Duration? = nil
        ) -> Stub {
            Stub(outcome: .response(TransportResponse(status: status, headers: headers, body: body)), delay: delay)
        }

        /// A response whose body is `value` as JSON.
        public static func json(
            _ value: some Encodable, status: Int = 200, headers: HeaderFields = [:], after delay: Duration? = nil
        ) -> Stub {
            do {
                var fields = headers
                fields["Content-Type"] = "application/json"
                let body = try JSONEncoder().encode(value)
                return Stub(
                    outcome: .response(TransportResponse(status: status, headers: fields, body: body)), delay: delay)
            } catch {
                return Stub(outcome: .failure(error), delay: delay)
            }
        }

        /// A response whose body is `text` in UTF-8.
        public static func text(
            _ text: String, status: Int = 200, headers: HeaderFields = [:], after delay: Duration? = nil
        ) -> Stub {
            Stub.status(status, body: Data(text.utf8), headers: headers, after: delay)
        }

        /// A transport failure: the request throws `error` (after `delay` when given).
        public static func failure(_ error: any Error, after delay: Duration? = nil) -> Stub {
            Stub(outcome: .failure(error), delay: delay)
        }

        /// A transport failure of `kind`, e.g. ``HTTPError/Kind/connectionFailed``.
        public static func failure(_ kind: HTTPError.Kind, after delay: Duration? = nil) -> Stub {
            failure(HTTPError(kind, endpoint: "", detail: "stubbed failure"), after: delay)
        }
    }

    private struct Route {
        let method: HTTPMethod
        let path: String
        var stubs: [Stub]
    }

    private struct State {
        var routes: [Route] = []
        var requests: [TransportRequest] = []
        var failure: (any Error)?
    }

    private let state = Mutex(State())

    /// A transport with no stubs: every request fails until stubbed.
    public init() {}

    /// A transport on which every request fails with `error` (e.g. "offline").
    public init(failingWith error: any Error) {
        state.withLock { $0.failure = error }
    }

    /// Answers requests for `method` and `path` with `responses`, in order, the last repeating;
    /// replaces earlier stubs of the same endpoint.
    public func stub(_ method: HTTPMethod, _ path: String, _ responses: Stub...) {
        stub(method, path, responses)
    }

    /// Answers `endpoint`'s method and path with `responses`, in order, the last repeating.
    public func stub(_ endpoint: some Endpoint, _ responses: Stub...) {
        stub(endpoint.method, endpoint.path, responses)
    }

    private func stub(_ method: HTTPMethod, _ path: String, _ responses: [Stub]) {
        precondition(!responses.isEmpty, "StubTransport.stub(\(method) \(path)) needs at least one response")
        // The client adds the leading slash to an endpoint path that lacks one; so does the stub.
        let path = path.hasPrefix("/") ? path : "/" + path
        state.withLock { state in
            state.routes.removeAll { $0.method == method && $0.path == path }
            state.routes.append(Route(method: method, path: path, stubs: responses))
        }
    }

    /// Every request sent so far, in order.
    public var requests: [TransportRequest] { state.withLock { $0.requests } }

    /// Forgets the recorded requests (the stubs stay).
    public func clearRequests() { state.withLock { $0.requests.removeAll() } }

    /// Records `request` and answers with the next stub for its method and path, after the stub's
    /// delay.
    ///
    /// A request matches the stub added last whose method is the same and whose path is the URL's
    /// path or its end. The transport implements only this method, so the ``APIClient`` runs it through
    /// the default interruption handling (in a task of its own).
    ///
    /// - Throws: ``HTTPError`` of kind ``HTTPError/Kind/unexpectedRequest`` when nothing was stubbed
    ///   for the request, or ``HTTPError/Kind/responseTooLarge`` for a stubbed body over
    ///   `maximumBodySize`; the stubbed failure, or the error of ``init(failingWith:)``;
    ///   `CancellationError` when the task is cancelled during a stub's delay.
    public func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        let stub = try state.withLock { state throws -> Stub in
            state.requests.append(request)
            if let failure = state.failure { return Stub(outcome: .failure(failure), delay: nil) }
            let path = request.url.path
            guard
                let index = state.routes.lastIndex(where: {
                    $0.method == request.method
                        && (path == $0.path || path.hasSuffix($0.path) && $0.path.hasPrefix("/"))
                })
            else {
                let known = state.routes.map { "\($0.method) \($0.path)" }.joined(separator: ", ")
                throw HTTPError(
                    .unexpectedRequest, endpoint: "\(request.method) \(path)",
                    detail: "StubTransport has no stub for it (stubbed: \(known.isEmpty ? "nothing" : known)); "
                        + "add one with stub(.\(request.method.rawValue.lowercased()), \"\(path)\", .status(200))")
            }
            let next = state.routes[index].stubs[0]
            if state.routes[index].stubs.count > 1 { state.routes[index].stubs.removeFirst() }
            return next
        }
        if let delay = stub.delay { try await Task.sleep(for: delay) }
        switch stub.outcome {
        case .response(let response):
            guard response.body.count <= maximumBodySize else {
                throw HTTPError.responseTooLarge(limit: maximumBodySize, status: response.status)
            }
            return response
        case .failure(let error):
            throw error
        }
    }
}

extension HTTPError.Kind {
    /// A ``StubTransport`` received a request nothing was stubbed for.
    public static let unexpectedRequest = HTTPError.Kind("unexpected request")
}
