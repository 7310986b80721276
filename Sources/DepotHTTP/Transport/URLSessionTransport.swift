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
    /// The underlying session; its delegate is the transport's own.
    public let session: URLSession
    private let tasks: TaskRegistry

    /// A transport on a session of its own: ephemeral, without cache or cookie storage.
    public convenience init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.init(configuration: configuration)
    }

    /// A transport on a session made from `configuration`, with the transport as its delegate:
    /// bodies are received piece by piece (and refused as soon as they pass the size limit), and
    /// redirects come back as responses, for the ``APIClient`` to follow.
    public init(configuration: URLSessionConfiguration) {
        configuration.timeoutIntervalForRequest = Self.transportTimeout
        configuration.timeoutIntervalForResource = Self.transportTimeout
        let tasks = TaskRegistry()
        self.tasks = tasks
        session = URLSession(configuration: configuration, delegate: tasks, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// One transport for the whole process.
    public static let shared = URLSessionTransport()

    /// Long enough never to fire before the client's own deadline.
    private static let transportTimeout: TimeInterval = 24 * 60 * 60

    /// Sends `request` on ``session`` and returns the whole response; cancelling the calling task
    /// cancels the `URLSessionTask`. A redirect is returned as it came, not followed. On Linux a
    /// request whose method is not idempotent goes out on a connection of its own, so that it is
    /// never sent twice (libcurl resends a request whose reused connection died unanswered).
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - maximumBodySize: The largest body accepted, in bytes, counted as it arrives (after
    ///     URLSession's own gzip or deflate decoding): the task is cancelled the moment the body
    ///     passes it, or when its announced length does.
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
        let completion = Completion(limit: maximumBodySize)
        let (session, tasks) = sessionAndRegistry(for: request)
        defer { if session !== self.session { session.finishTasksAndInvalidate() } }
        let task = session.dataTask(with: outgoing)
        tasks.register(task, completion)
        defer { tasks.remove(task) }
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

    /// The session a request goes out on: ``session``, except for a request whose method is not
    /// idempotent on Linux, which gets a session (and so a connection) of its own. libcurl, under
    /// swift-corelibs-foundation, sends a request again by itself when it went out on a reused
    /// connection that the server closed without answering — a `POST` too, and without its body,
    /// the call then hanging until its deadline. On a new connection it does not; only the
    /// client's retry policy sends a request again.
    private func sessionAndRegistry(for request: TransportRequest) -> (URLSession, TaskRegistry) {
        #if canImport(FoundationNetworking)
            if !request.method.isIdempotent {
                let registry = TaskRegistry()
                return (
                    URLSession(configuration: session.configuration, delegate: registry, delegateQueue: nil), registry
                )
            }
        #endif
        return (session, tasks)
    }

    fileprivate static let decodedByFoundation: Set<String> = ["gzip", "x-gzip", "deflate"]
}

/// The session's delegate: hands each task's events to the ``Completion`` its call waits on.
private final class TaskRegistry: NSObject, URLSessionDataDelegate, Sendable {
    private let completions = Mutex<[Int: Completion]>([:])

    func register(_ task: URLSessionTask, _ completion: Completion) {
        completions.withLock { $0[task.taskIdentifier] = completion }
    }

    func remove(_ task: URLSessionTask) {
        _ = completions.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    }

    private func completion(_ task: URLSessionTask) -> Completion? {
        completions.withLock { $0[task.taskIdentifier] }
    }

    // No `didReceive response:completionHandler:`: swift-corelibs-foundation pauses the transfer
    // for it, and a body that then stalls ends as `cancelled` at once. The head is read from the
    // task with the first piece of the body, and at completion.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Over the limit: stop receiving (the task then completes, and the call fails as too large).
        guard let completion = completion(dataTask), completion.append(data, response: dataTask.response) else {
            return
        }
        dataTask.cancel()
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The APIClient follows redirects itself, dropping credentials on a change of origin.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completion(task)?.finish(error: error, response: task.response)
    }
}

/// Collects one data task's response and body, refusing a body past `limit` as it arrives, and
/// hands the outcome to the caller waiting for it, whichever comes first.
private final class Completion: Sendable {
    private typealias Outcome = Result<(Data, URLResponse), any Error>

    private struct State {
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var outcome: Outcome?
        /// Whether the response head's announced length was checked (with the first piece).
        var headChecked = false
        var body = Data()
        var tooLarge = false
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    func store(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        let early = state.withLock { state -> Outcome? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Appends a piece of the body; true when the body is now over the limit (the task is to
    /// stop). With the first piece comes the response head: a body announcing a length over the
    /// limit stops at once (unless Foundation decodes it: a compressed length says nothing of the
    /// decoded one).
    func append(_ data: Data, response: URLResponse?) -> Bool {
        state.withLock { state in
            if !state.headChecked, let response {
                state.headChecked = true
                let coding = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding")
                let decoded = coding.map { URLSessionTransport.decodedByFoundation.contains($0.lowercased()) } ?? false
                if !decoded, response.expectedContentLength > Int64(limit) { state.tooLarge = true }
            }
            guard !state.tooLarge else { return true }
            guard state.body.count + data.count <= limit else {
                state.tooLarge = true
                state.body = Data()
                return true
            }
            state.body.append(data)
            return false
        }
    }

    func finish(error: (any Error)?, response: URLResponse?) {
        let continuation = state.withLock { state -> (CheckedContinuation<(Data, URLResponse), any Error>?, Outcome)? in
            guard state.outcome == nil else { return nil }
            let outcome: Outcome
            if state.tooLarge {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                outcome = .failure(HTTPError.responseTooLarge(limit: limit, status: status))
            } else if let error {
                outcome = .failure(error)
            } else if let response {
                outcome = .success((state.body, response))
            } else {
                outcome = .failure(
                    HTTPError(.invalidResponse, endpoint: "", detail: "URLSession completed without a response"))
            }
            state.outcome = outcome
            return (state.continuation.take(), outcome)
        }
        if let (waiting, outcome) = continuation { waiting?.resume(with: outcome) }
    }
}
