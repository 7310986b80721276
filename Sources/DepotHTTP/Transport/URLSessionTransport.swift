import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` on Foundation's `URLSession`: the default on Apple platforms, and an option
/// on Linux.
///
/// ```swift
/// let client = APIClient(baseURL: url, transport: URLSessionTransport())
/// ```
///
/// On Linux (swift-corelibs-foundation over libcurl) it works, but measured here it is slower
/// than ``AsyncHTTPClientTransport`` (1.6× sequentially, 3.6× at 16 concurrent), reopens
/// connections under concurrency, and grows by about 150 bytes per request (a known leak of
/// libcurl handles in swift-corelibs-foundation). Its own timeouts are not used: the
/// ``APIClient`` enforces the deadline (sub-second `URLRequest` timeouts fire after a few
/// milliseconds on Linux). Foundation decodes gzip and deflate itself; this transport removes
/// the `Content-Encoding` field it leaves behind.
public final class URLSessionTransport: Transport {
    /// The underlying session.
    public let session: URLSession

    /// A transport on a session of its own: ephemeral, without cache or cookie storage.
    public convenience init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = Self.transportTimeout
        configuration.timeoutIntervalForResource = Self.transportTimeout
        self.init(session: URLSession(configuration: configuration))
    }

    /// A transport on `session`.
    public init(session: URLSession) {
        self.session = session
    }

    /// One transport for the whole process.
    public static let shared = URLSessionTransport()

    /// Long enough never to fire before the client's own deadline.
    private static let transportTimeout: TimeInterval = 24 * 60 * 60

    /// Sends `request` on ``session`` and returns the whole response; cancelling the calling task
    /// cancels the `URLSessionTask`.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - maximumBodySize: The largest body accepted, in bytes; checked once URLSession has
    ///     received the whole body (after its own gzip or deflate decoding).
    /// - Returns: The response, with `Content-Encoding` and `Content-Length` removed when Foundation
    ///   already decoded the body.
    /// - Throws: ``HTTPError`` of kind ``HTTPError/Kind/responseTooLarge`` for a body over
    ///   `maximumBodySize`, or of kind ``HTTPError/Kind/invalidResponse`` for a response that is not
    ///   HTTP; `CancellationError` when the task was cancelled before the request started;
    ///   otherwise URLSession's error (a `URLError`, `.cancelled` when the task was cancelled),
    ///   which the ``APIClient`` maps to an ``HTTPError``.
    public func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
        try await exchange(request, maximumBodySize: maximumBodySize, interruption: nil)
    }

    /// Sends `request`, cancelling its `URLSessionTask` (`CancellationError`) when
    /// `interruption` fires: the call stays in the caller's task.
    ///
    /// - Throws: What ``send(_:maximumBodySize:)`` throws; `CancellationError` when
    ///   `interruption` fires.
    public func send(_ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption)
        async throws -> TransportResponse
    {
        try await exchange(request, maximumBodySize: maximumBodySize, interruption: interruption)
    }

    private func exchange(
        _ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption?
    ) async throws -> TransportResponse {
        var outgoing = URLRequest(url: request.url)
        outgoing.httpMethod = request.method.rawValue
        outgoing.timeoutInterval = Self.transportTimeout
        outgoing.cachePolicy = .reloadIgnoringLocalCacheData
        for field in request.headers {
            outgoing.addValue(field.value, forHTTPHeaderField: field.name)
        }
        outgoing.httpBody = request.body
        // A task cancelled before it is resumed may never report; do not start one.
        if Task.isCancelled || interruption?.isInterrupted == true { throw CancellationError() }
        let completion = Completion()
        let task = session.dataTask(with: outgoing) { data, response, error in
            completion.resume(data: data, response: response, error: error)
        }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await TransportInterruption.stopping(
                interruption,
                with: {
                    // Off the caller: swift-corelibs-foundation's cancel waits for the session's queue.
                    DispatchQueue.global().async { task.cancel() }
                }
            ) {
                // A completion that comes first (a cancel before `resume`) is kept for the continuation.
                try await withCheckedThrowingContinuation { continuation in
                    completion.store(continuation)
                    task.resume()
                }
            }
        } catch {
            if interruption?.isInterrupted == true { throw CancellationError() }
            throw error
        }
        guard let response = response as? HTTPURLResponse else {
            throw HTTPError(.invalidResponse, endpoint: "", detail: "URLSession returned a response without a status")
        }
        guard data.count <= maximumBodySize else {
            throw HTTPError.responseTooLarge(limit: maximumBodySize, status: response.statusCode)
        }
        var headers = HeaderFields()
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            headers.add(name, value)
        }
        // Foundation already decoded gzip and deflate bodies but keeps the compressed length.
        if let coding = headers["Content-Encoding"]?.lowercased(), Self.decodedByFoundation.contains(coding) {
            headers.remove("Content-Encoding")
            headers.remove("Content-Length")
        }
        return TransportResponse(status: response.statusCode, headers: headers, body: data)
    }

    private static let decodedByFoundation: Set<String> = ["gzip", "x-gzip", "deflate"]
}

/// Hands a data task's completion to the caller waiting for it, whichever comes first.
private final class Completion: Sendable {
    private typealias Outcome = Result<(Data, URLResponse), any Error>

    private struct State {
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var outcome: Outcome?
    }

    private let state = Mutex(State())

    func store(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        let early = state.withLock { state -> Outcome? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func resume(data: Data?, response: URLResponse?, error: (any Error)?) {
        let outcome: Outcome
        if let error {
            outcome = .failure(error)
        } else if let response {
            outcome = .success((data ?? Data(), response))
        } else {
            outcome = .failure(
                HTTPError(.invalidResponse, endpoint: "", detail: "URLSession completed without a response"))
        }
        let continuation = state.withLock { state -> CheckedContinuation<(Data, URLResponse), any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            return state.continuation.take()
        }
        continuation?.resume(with: outcome)
    }
}
