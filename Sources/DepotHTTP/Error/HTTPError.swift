/// The one error ``APIClient`` throws: what went wrong (``kind``), for which endpoint, with the
/// status, the server's message, an excerpt of the body and the underlying error when known.
///
/// ```swift
/// do {
///     let user = try await client.send(GetUser(id: 42))
/// } catch let error as HTTPError where error.kind == .notFound {
///     print(error.serverMessage ?? "no such user")  // "No user 42"
/// } catch let error as HTTPError {
///     print(error)  // GET /users/42: server error (503): …
/// }
/// ```
///
/// The description names the endpoint by method and path; query items and header values are
/// never printed (they may hold secrets).
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var kind: Kind
    /// The endpoint as `METHOD /path`, e.g. `GET /users/42` (without the query).
    public var endpoint: String
    /// The response status, when a response arrived.
    public var status: Int?
    /// The server's own message, read from the error body by ``StatusPolicy/messageKeys``.
    public var serverMessage: String?
    /// The start of the response body (at most ``bodyExcerptLength`` characters), when useful.
    public var bodyExcerpt: String?
    /// For decoding and encoding failures: where in the JSON, e.g. `data.items[2].name`.
    public var codingPath: String?
    /// A human-readable account of the failure.
    public var detail: String
    /// The error this one wraps: the transport's, the decoder's, or a `CancellationError`.
    public var underlying: (any Error)?
    /// The error body decoded as the endpoint's ``Endpoint/ErrorBody``, when it declares one
    /// and the body decoded; read it with ``errorBody(as:)``.
    public var errorBody: (any Sendable)?

    /// The longest body excerpt an error carries.
    public static let bodyExcerptLength = 256

    /// An error from its parts.
    public init(
        _ kind: Kind, endpoint: String, detail: String = "", status: Int? = nil, serverMessage: String? = nil,
        bodyExcerpt: String? = nil, codingPath: String? = nil, underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.endpoint = endpoint
        self.detail = detail
        self.status = status
        self.serverMessage = serverMessage
        self.bodyExcerpt = bodyExcerpt
        self.codingPath = codingPath
        self.underlying = underlying
    }

    /// The decoded error body (see ``Endpoint/ErrorBody``) as `type`, or `nil` when the
    /// endpoint declares another type, none, or the body did not decode.
    public func errorBody<Body>(as type: Body.Type = Body.self) -> Body? { errorBody as? Body }

    /// `METHOD /path: kind`, then the status, the server's message, the detail, the coding path and
    /// the body excerpt when present, e.g. `GET /users/42: not found (404): No user 42`.
    public var description: String {
        var text = "\(endpoint): \(kind)"
        if let status { text += " (\(status))" }
        if let serverMessage { text += ": \(serverMessage)" }
        if !detail.isEmpty { text += serverMessage == nil ? ": \(detail)" : " — \(detail)" }
        if let codingPath { text += " at \(codingPath.isEmpty ? "the top level" : codingPath)" }
        if let bodyExcerpt, !bodyExcerpt.isEmpty { text += "; body: \(bodyExcerpt)" }
        return text
    }
}

extension HTTPError {
    /// What went wrong, as an open set: the client's kinds below, and any a ``StatusPolicy``
    /// override defines.
    ///
    /// ```swift
    /// extension HTTPError.Kind {
    ///     static let paymentRequired = HTTPError.Kind("payment required")
    /// }
    /// var policy = StatusPolicy()
    /// policy.overrides[402] = .paymentRequired
    /// ```
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// A short, lowercase name, e.g. `"not found"`.
        public let name: String

        /// A kind named `name`; two kinds are equal when their names are.
        public init(_ name: String) { self.name = name }

        /// The kind's ``name``.
        public var description: String { name }

        // MARK: - Statuses

        /// 401: the credentials were missing or rejected (after one refresh, with
        /// ``TokenAuthentication``).
        public static let unauthorized = Kind("unauthorized")
        /// 403: authenticated, but not allowed.
        public static let forbidden = Kind("forbidden")
        /// 404, with the server's message when its body holds one.
        public static let notFound = Kind("not found")
        /// The server requires a newer app (426 and 501 by default; see
        /// ``StatusPolicy/updateRequiredStatuses``).
        public static let updateRequired = Kind("app update required")
        /// Any other 5xx.
        public static let serverError = Kind("server error")
        /// Any other status the endpoint does not accept, with an excerpt of the body.
        public static let unexpectedStatus = Kind("unexpected status")

        // MARK: - Bodies

        /// The response body did not decode as the endpoint's response; ``HTTPError/codingPath``
        /// says where.
        public static let decodingFailed = Kind("decoding failed")
        /// The request body could not be encoded.
        public static let encodingFailed = Kind("encoding failed")
        /// The request could not be built (an invalid URL).
        public static let invalidRequest = Kind("invalid request")
        /// The response was malformed: a body that does not decompress, or a transport protocol
        /// error.
        public static let invalidResponse = Kind("invalid response")
        /// The body was larger than ``APIClient/Configuration/maximumResponseSize``.
        public static let responseTooLarge = Kind("response too large")

        // MARK: - Transport

        /// The deadline passed before the whole response arrived.
        public static let timedOut = Kind("timed out")
        /// The calling task was cancelled.
        public static let cancelled = Kind("cancelled")
        /// No connection could be made, or the connection was lost before the response was
        /// complete.
        public static let connectionFailed = Kind("connection failed")
        /// Any other failure of the transport.
        public static let transportFailed = Kind("transport failed")

        /// Whether this kind is a failure of the exchange itself rather than an answer from the
        /// server — what a retry may cure.
        public var isTransportFailure: Bool {
            self == .connectionFailed || self == .transportFailed
        }
    }
}
