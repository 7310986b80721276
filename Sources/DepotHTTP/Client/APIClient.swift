import Foundation
import Logging

/// Sends ``Endpoint``s to one API and returns their typed responses.
///
/// The client owns what must be identical on every ``Transport``: the per-call deadline, the
/// `User-Agent` and `Accept-Encoding` fields, `gzip`/`deflate` decompression, retries, the
/// ``Middleware`` chain and the mapping of every failure to ``HTTPError``.
///
/// ```swift
/// let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!)
/// let user = try await client.send(GetUser(id: 42))
/// // GET https://api.example.com/v1/users/42
/// // User-Agent: DepotHTTP/1.0, Accept-Encoding: gzip, deflate
/// ```
///
/// The transport defaults to ``AsyncHTTPClientTransport/shared`` on Linux and
/// ``URLSessionTransport/shared`` elsewhere. A client is `Sendable` and meant to be shared.
public final class APIClient: Sendable {
    /// The URL endpoint paths are resolved against.
    public let baseURL: URL
    /// What sends the requests.
    public let transport: any Transport
    /// Headers, deadline, coders, policies and middleware.
    public let configuration: Configuration

    let baseURLString: String
    /// The configured headers with `User-Agent` and `Accept-Encoding`: the same on every request.
    let baseHeaders: HeaderFields
    /// The credential header fields of every middleware, for their contexts and for redirects.
    let credentialHeaders: Set<String>
    /// Identical GETs in flight, sent once.
    let shared = SharedRequests()

    /// A client for the API at `baseURL`.
    ///
    /// - Parameters:
    ///   - baseURL: The URL endpoint paths are appended to, e.g. `https://api.example.com/v1`
    ///     (trailing slashes dropped). It must have no query or fragment: if it has one, every
    ///     call fails with an ``HTTPError`` of kind ``HTTPError/Kind/invalidRequest``.
    ///   - transport: What sends the requests; ``defaultTransport`` unless given.
    ///   - configuration: Headers, deadline, coders, policies and middleware.
    public init(
        baseURL: URL, transport: any Transport = APIClient.defaultTransport, configuration: Configuration = .init()
    ) {
        self.baseURL = baseURL
        self.transport = transport
        self.configuration = configuration
        baseURLString = Self.trimmed(baseURL)
        var headers = configuration.headers
        headers["User-Agent"] = configuration.userAgent
        headers["Accept-Encoding"] = ContentDecoding.acceptEncoding
        baseHeaders = headers
        credentialHeaders = configuration.middleware.reduce(into: []) { $0.formUnion($1.credentialHeaders) }
    }

    /// The transport clients use unless told otherwise: AsyncHTTPClient on Linux, URLSession
    /// on Apple platforms.
    public static var defaultTransport: any Transport {
        #if canImport(AsyncHTTPClient)
            AsyncHTTPClientTransport.shared
        #else
            URLSessionTransport.shared
        #endif
    }

    /// Sends `endpoint` and returns its decoded response.
    ///
    /// ```swift
    /// do {
    ///     let user = try await client.send(GetUser(id: 42))
    /// } catch let error as HTTPError {
    ///     switch error.kind {
    ///     case .notFound: showMissing(error.serverMessage)
    ///     case .timedOut, .connectionFailed: showOffline()
    ///     default: throw error
    ///     }
    /// }
    /// ```
    ///
    /// The call has one deadline, the endpoint's `timeout` or the client's, for every attempt,
    /// the waits between them and the middleware. Retries (of idempotent endpoints only) follow
    /// the ``RetryPolicy``; the caller sees the last attempt's outcome.
    ///
    /// - Throws: ``HTTPError``, always; cancelling the calling task cancels the request and
    ///   throws one of kind ``HTTPError/Kind/cancelled``. A status outside the endpoint's
    ///   `acceptedStatuses` throws the ``StatusPolicy``'s kind (``HTTPError/Kind/notFound``,
    ///   ``HTTPError/Kind/serverError``, …); a body that does not decode,
    ///   ``HTTPError/Kind/decodingFailed``; a passed deadline, ``HTTPError/Kind/timedOut``; a
    ///   request that cannot be built, ``HTTPError/Kind/invalidRequest`` or
    ///   ``HTTPError/Kind/encodingFailed``; a body over the size limit,
    ///   ``HTTPError/Kind/responseTooLarge``; a failed exchange, ``HTTPError/Kind/connectionFailed``,
    ///   ``HTTPError/Kind/invalidResponse`` or ``HTTPError/Kind/transportFailed``.
    public func send<E: Endpoint>(_ endpoint: E) async throws -> E.Response {
        let name = endpoint.endpointName
        guard !Task.isCancelled else { throw HTTPError.cancelled(endpoint: name) }
        let timeout = endpoint.timeout ?? configuration.timeout
        let deadline = ContinuousClock.now + timeout
        let request = try makeRequest(for: endpoint, named: name)
        var context = MiddlewareContext(
            method: endpoint.method, path: endpoint.path, isIdempotent: endpoint.isIdempotent, timeout: timeout,
            deadline: deadline, interruption: TransportInterruption())
        context.credentialHeaders = credentialHeaders
        let response: TransportResponse
        if configuration.sharesIdenticalRequests, endpoint.method == .get || endpoint.method == .head,
            request.body == nil
        {
            let key = SharedRequests.Key(
                endpoint: name, request: request.url.absoluteString, headers: request.headers, timeout: timeout)
            response = try await shared.response(for: key, cancelled: { HTTPError.cancelled(endpoint: name) }) {
                [context] in try await self.perform(request, context: context)
            }
        } else {
            response = try await perform(request, context: context)
        }
        guard endpoint.acceptedStatuses.contains(response.status) else {
            var failure = configuration.statusPolicy.error(for: response, endpoint: name)
            if E.ErrorBody.self != NoErrorBody.self, !response.body.isEmpty {
                // The status decides the kind; a body that is not the declared type is named in
                // the detail (with its coding path), and the error has no decoded body.
                do {
                    failure.errorBody = try configuration.decoder.decode(E.ErrorBody.self, from: response.body)
                } catch let error as DecodingError {
                    let (path, detail) = Self.describe(error)
                    failure.detail = "the error body is not a \(E.ErrorBody.self): \(detail)"
                    failure.codingPath = path
                } catch {
                    failure.detail = "the error body is not a \(E.ErrorBody.self): \(error)"
                }
            }
            throw failure
        }
        return try decode(response, with: endpoint.responseDecoder, endpoint: name)
    }

    /// Sends the endpoint `strategy` makes for `input`.
    ///
    /// ```swift
    /// let user = try await client.send(userByID, 42)
    /// ```
    ///
    /// - Throws: ``HTTPError``, always, as ``send(_:)`` does.
    public func send<Input, Response>(_ strategy: EndpointStrategy<Input, Response>, _ input: Input) async throws
        -> Response
    {
        try await send(strategy(input))
    }

    // MARK: - Pipeline

    /// The response to `request` after the middleware, within the call's deadline.
    private func perform(_ request: TransportRequest, context: MiddlewareContext) async throws -> TransportResponse {
        // The chain runs in the task that performs the call. At the deadline the interruption ends
        // the exchange in flight and whatever middleware awaits through `context.withinDeadline`
        // (a token refresh).
        let interruption = context.interruption
        let token = Deadline.Watchdog.shared.schedule(at: context.deadline) { interruption.interrupt() }
        let response: TransportResponse
        do {
            defer { Deadline.Watchdog.shared.remove(token) }
            response = try await run(request, context: context, from: 0)
        } catch {
            throw failure(error, context: context)
        }
        // Work nothing interrupts (decompression, a middleware after `next`) can carry a call past
        // its deadline: a call completes within it or times out, as on every path above.
        if interruption.isInterrupted { throw HTTPError.timedOut(endpoint: context.endpoint, after: context.timeout) }
        return response
    }

    /// Middleware `index` and the rest of the chain; past the last, the exchange itself.
    private func run(_ request: TransportRequest, context: MiddlewareContext, from index: Int) async throws
        -> TransportResponse
    {
        let middleware = configuration.middleware
        guard index < middleware.count else { return try await exchange(request, context: context) }
        return try await middleware[index].intercept(request, context: context) { request in
            try await self.run(request, context: context, from: index + 1)
        }
    }

    /// The transport's answer, retried by the policy, decompressed; errors as ``HTTPError``s, so
    /// that middleware sees one error type.
    private func exchange(_ request: TransportRequest, context: MiddlewareContext) async throws -> TransportResponse {
        do {
            return try await attempts(request, context: context)
        } catch {
            throw failure(error, context: context)
        }
    }

    /// What a failed call throws: past its deadline a timeout, whatever the transport made of the
    /// interruption; then the caller's cancellation; otherwise the error in the shared set of kinds.
    private func failure(_ error: any Error, context: MiddlewareContext) -> HTTPError {
        if let error = error as? HTTPError, error.kind == .timedOut, context.interruption.isInterrupted { return error }
        return context.stopped ?? HTTPError.mapping(error, endpoint: context.endpoint)
    }

    private func attempts(_ request: TransportRequest, context: MiddlewareContext) async throws -> TransportResponse {
        let policy = configuration.retryPolicy
        var attempt = 1
        while true {
            let outcome: Result<TransportResponse, HTTPError>
            do {
                outcome = .success(try await send(request, context: context, attempt: attempt))
            } catch {
                if context.stopped != nil { throw error }
                outcome = .failure(HTTPError.mapping(error, endpoint: context.endpoint))
            }
            guard context.isIdempotent, attempt < policy.maximumAttempts, isRetryable(outcome, policy) else {
                return try outcome.get()
            }
            let delay = policy.delay(afterAttempt: attempt, response: try? outcome.get())
            guard ContinuousClock.now + delay < context.deadline else { return try outcome.get() }
            configuration.logger?.debug(
                "retrying \(context.endpoint) in \(Self.milliseconds(delay)) ms",
                metadata: ["http.attempt": "\(attempt + 1)", "http.outcome": "\(Self.describe(outcome))"])
            try await policy.sleep(delay)
            attempt += 1
        }
    }

    /// One attempt (the first is 1): the transport's response, redirects followed, decompressed.
    private func send(_ request: TransportRequest, context: MiddlewareContext, attempt: Int) async throws
        -> TransportResponse
    {
        var request = request
        var redirects = 0
        var response: TransportResponse
        while true {
            response = try await configuration.tracing.send(
                request, endpoint: context.endpoint, resends: attempt - 1 + redirects
            ) { request in
                try await transport.send(
                    request, maximumBodySize: configuration.maximumResponseSize, interruption: context.interruption)
            }
            guard let next = Redirect.next(after: request, response, credentialHeaders: credentialHeaders) else {
                break
            }
            redirects += 1
            guard redirects <= Redirect.maximum else {
                // Host and path only: a query may hold keys.
                throw HTTPError(
                    .invalidResponse, endpoint: context.endpoint,
                    detail: "more than \(Redirect.maximum) redirects (the last to \(next.url.host ?? "")"
                        + "\(next.url.path))", status: response.status)
            }
            request = next
        }
        do {
            return try ContentDecoding.decode(response, maximumSize: configuration.maximumResponseSize)
        } catch .tooLarge {
            throw HTTPError.responseTooLarge(
                limit: configuration.maximumResponseSize, status: response.status, endpoint: context.endpoint,
                decompressed: true)
        } catch .unsupported(let coding) {
            throw HTTPError(
                .invalidResponse, endpoint: context.endpoint, detail: "unsupported Content-Encoding \(coding)",
                status: response.status)
        } catch .corrupt(let coding, let underlying) {
            throw HTTPError(
                .invalidResponse, endpoint: context.endpoint, detail: "the \(coding) body does not decompress",
                status: response.status, underlying: underlying)
        }
    }

    private func isRetryable(_ outcome: Result<TransportResponse, HTTPError>, _ policy: RetryPolicy) -> Bool {
        switch outcome {
        case .success(let response): policy.retryableStatuses.contains(response.status)
        case .failure(let error): error.kind.isTransportFailure
        }
    }

    // MARK: - Describing

    static func milliseconds(_ duration: Duration) -> Int64 { duration.wholeMilliseconds }

    private static func describe(_ outcome: Result<TransportResponse, HTTPError>) -> String {
        switch outcome {
        case .success(let response): "status \(response.status)"
        case .failure(let error): "\(error.kind)"
        }
    }
}
