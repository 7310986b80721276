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
    public var method: HTTPMethod
    public var path: String
    public var query: [URLQueryItem]
    public var headers: HeaderFields
    public var body: RequestBody
    public var isIdempotent: Bool
    public var timeout: Duration?
    public var acceptedStatuses: Range<Int>
    public var responseDecoder: ResponseDecoder<Response>

    /// An endpoint from its parts; `isIdempotent` defaults to the method's.
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
