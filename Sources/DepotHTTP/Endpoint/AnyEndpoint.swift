import Foundation

/// An endpoint as a value: build endpoints from functions instead of declaring a type per call.
///
/// ```swift
/// enum UsersAPI {
///     static func user(_ id: Int) -> AnyEndpoint<User> {
///         AnyEndpoint(.get, "/users/\(id)")
///     }
///     static func search(_ text: String) -> AnyEndpoint<[User]> {
///         AnyEndpoint(.get, "/users", query: [URLQueryItem(name: "q", value: text)],
///                     decoder: .json(wrappedIn: "data"))
///     }
/// }
/// let user = try await client.send(UsersAPI.user(42))
/// ```
///
/// Any ``Endpoint`` converts with `AnyEndpoint(endpoint)`, and ``map(_:)`` changes the response
/// type while keeping the request.
public struct AnyEndpoint<Response: Sendable>: Endpoint {
    /// The request method.
    public var method: HTTPMethod
    /// The path, relative to the client's base URL, e.g. `/users/42`.
    public var path: String
    /// The query items, percent-encoded strictly (`+` as `%2B`, a space as `%20`).
    public var query: [URLQueryItem]
    /// Header fields added to (and replacing) the client's defaults.
    public var headers: HeaderFields
    /// The request body; ``RequestBody/empty`` for none.
    public var body: RequestBody
    /// Whether the client may send the request again automatically (see ``RetryPolicy``).
    public var isIdempotent: Bool
    /// The deadline for the whole call, retries included; `nil` for the client's
    /// ``APIClient/Configuration/timeout``.
    public var timeout: Duration?
    /// The statuses that count as success; any other becomes an ``HTTPError``.
    public var acceptedStatuses: Range<Int>
    /// How a successful response becomes a `Response`.
    public var responseDecoder: ResponseDecoder<Response>

    /// An endpoint from its parts; `isIdempotent` defaults to the method's.
    ///
    /// - Parameters:
    ///   - method: The request method; `GET` by default.
    ///   - path: The path, relative to the client's base URL, e.g. `/users/42`.
    ///   - query: The query items; none by default.
    ///   - headers: Header fields added to (and replacing) the client's defaults.
    ///   - body: The request body; none by default.
    ///   - isIdempotent: Whether the client may retry the request; `nil` takes the method's
    ///     ``HTTPMethod/isIdempotent``, so a `POST` is never retried unless this says `true`.
    ///   - timeout: The deadline for the whole call, retries included; `nil` for the client's.
    ///   - acceptedStatuses: The statuses that count as success; `200..<300` by default.
    ///   - decoder: How a successful response becomes a `Response`.
    public init(
        _ method: HTTPMethod = .get, _ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:],
        body: RequestBody = .empty, isIdempotent: Bool? = nil, timeout: Duration? = nil,
        acceptedStatuses: Range<Int> = 200..<300, decoder: ResponseDecoder<Response>
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.isIdempotent = isIdempotent ?? method.isIdempotent
        self.timeout = timeout
        self.acceptedStatuses = acceptedStatuses
        self.responseDecoder = decoder
    }

    /// The same request and response mapping as `endpoint`.
    public init<Base: Endpoint>(_ endpoint: Base) where Base.Response == Response {
        self.init(
            endpoint.method, endpoint.path, query: endpoint.query, headers: endpoint.headers, body: endpoint.body,
            isIdempotent: endpoint.isIdempotent, timeout: endpoint.timeout,
            acceptedStatuses: endpoint.acceptedStatuses, decoder: endpoint.responseDecoder)
    }

    /// The same request, its response transformed by `transform`.
    ///
    /// An error `transform` throws makes ``APIClient/send(_:)`` fail with an ``HTTPError`` of kind
    /// ``HTTPError/Kind/decodingFailed`` (an ``HTTPError`` it throws passes through as it is).
    ///
    /// ```swift
    /// let names: AnyEndpoint<[String]> = UsersAPI.search("ada").map { $0.map(\.name) }
    /// ```
    public func map<NewResponse: Sendable>(
        _ transform: @escaping @Sendable (Response) throws -> NewResponse
    ) -> AnyEndpoint<NewResponse> {
        AnyEndpoint<NewResponse>(
            method, path, query: query, headers: headers, body: body, isIdempotent: isIdempotent, timeout: timeout,
            acceptedStatuses: acceptedStatuses, decoder: responseDecoder.map(transform))
    }
}

extension AnyEndpoint where Response: Decodable {
    /// An endpoint whose response is decoded as JSON by the client's decoder.
    ///
    /// The parameters are those of the initializer that takes a `decoder`; this one passes
    /// ``ResponseDecoder/json(using:)``.
    public init(
        _ method: HTTPMethod = .get, _ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:],
        body: RequestBody = .empty, isIdempotent: Bool? = nil, timeout: Duration? = nil,
        acceptedStatuses: Range<Int> = 200..<300
    ) {
        self.init(
            method, path, query: query, headers: headers, body: body, isIdempotent: isIdempotent, timeout: timeout,
            acceptedStatuses: acceptedStatuses, decoder: .json())
    }
}

extension AnyEndpoint where Response == Data {
    /// An endpoint whose response is the raw body (not decoded as JSON, although `Data` is
    /// `Decodable`).
    ///
    /// The parameters are those of the initializer that takes a `decoder`; this one passes
    /// ``ResponseDecoder/data``.
    public init(
        _ method: HTTPMethod = .get, _ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:],
        body: RequestBody = .empty, isIdempotent: Bool? = nil, timeout: Duration? = nil,
        acceptedStatuses: Range<Int> = 200..<300
    ) {
        self.init(
            method, path, query: query, headers: headers, body: body, isIdempotent: isIdempotent, timeout: timeout,
            acceptedStatuses: acceptedStatuses, decoder: .data)
    }
}

extension AnyEndpoint where Response == Void {
    /// An endpoint whose response body is ignored.
    ///
    /// The parameters are those of the initializer that takes a `decoder`; this one passes
    /// ``ResponseDecoder/empty``.
    public init(
        _ method: HTTPMethod = .get, _ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:],
        body: RequestBody = .empty, isIdempotent: Bool? = nil, timeout: Duration? = nil,
        acceptedStatuses: Range<Int> = 200..<300
    ) {
        self.init(
            method, path, query: query, headers: headers, body: body, isIdempotent: isIdempotent, timeout: timeout,
            acceptedStatuses: acceptedStatuses, decoder: .empty)
    }
}
