import Foundation

/// One call of an HTTP API: the request *and* how its response becomes a value.
///
/// Define each call once; call sites only send it and get a typed value or an ``HTTPError``:
///
/// ```swift
/// struct GetUser: Endpoint {
///     typealias Response = User   // Decodable: decoded as JSON by the client's decoder
///     let id: Int
///     var path: String { "/users/\(id)" }
/// }
///
/// struct CreateUser: Endpoint {
///     typealias Response = User
///     let name: String
///     var method: HTTPMethod { .post }
///     var path: String { "/users" }
///     var body: RequestBody { .json(["name": name]) }
/// }
///
/// let user = try await client.send(GetUser(id: 42))
/// // GET https://api.example.com/users/42
/// ```
///
/// Every requirement but ``path`` has a default: `GET`, no query, no extra headers, no body,
/// idempotency from the method, the client's timeout, and JSON decoding for `Decodable`
/// responses (``ResponseDecoder/empty`` for `Void`, ``ResponseDecoder/data`` for `Data`).
public protocol Endpoint<Response>: Sendable {
    /// What a successful response decodes to.
    associatedtype Response: Sendable
    /// What the body of an error response (a status outside ``acceptedStatuses``) decodes to,
    /// as JSON, into ``HTTPError/errorBody(as:)``; ``NoErrorBody`` (nothing is decoded) by default.
    ///
    /// ```swift
    /// struct APIProblem: Decodable, Sendable { var error: String; var code: Int }
    /// struct CreateUser: Endpoint {
    ///     typealias Response = User
    ///     typealias ErrorBody = APIProblem  // {"error": "name taken", "code": 17}
    ///     …
    /// }
    /// } catch let error as HTTPError {
    ///     if let problem = error.errorBody(as: APIProblem.self), problem.code == 17 { … }
    /// }
    /// ```
    associatedtype ErrorBody: Decodable & Sendable = NoErrorBody

    /// The method; `GET` by default.
    var method: HTTPMethod { get }
    /// The path, relative to the base URL, e.g. `/users/42` (characters not allowed in a path
    /// are percent-encoded).
    var path: String { get }
    /// The URL ``path`` is resolved against instead of the client's, for an endpoint served
    /// elsewhere (an upload host, another API version): `nil`, the client's, by default. The
    /// client's middleware, headers and policies apply as to any call.
    var baseURL: URL? { get }
    /// The query items, percent-encoded strictly (`+` as `%2B`, a space as `%20`).
    var query: [URLQueryItem] { get }
    /// Header fields added to (and replacing) the client's defaults.
    var headers: HeaderFields { get }
    /// The body; none by default.
    var body: RequestBody { get }
    /// Whether the request may be sent again automatically; by default, whether ``method``
    /// is idempotent (so a POST is never retried unless its endpoint says so).
    var isIdempotent: Bool { get }
    /// The deadline for the whole call, retries included; the client's by default.
    var timeout: Duration? { get }
    /// The statuses that count as success; any other becomes an ``HTTPError``.
    var acceptedStatuses: Range<Int> { get }
    /// How a successful response becomes a ``Response``.
    var responseDecoder: ResponseDecoder<Response> { get }
}

extension Endpoint {
    /// `nil`: the client's base URL.
    public var baseURL: URL? { nil }

    /// `GET`, the default method.
    public var method: HTTPMethod { .get }
    /// No query items, by default.
    public var query: [URLQueryItem] { [] }
    /// No header fields beyond the client's, by default.
    public var headers: HeaderFields { [:] }
    /// No body (``RequestBody/empty``), by default.
    public var body: RequestBody { .empty }
    /// By default, the method's ``HTTPMethod/isIdempotent``: `GET`, `PUT` or `DELETE` may be retried, `POST`
    /// and `PATCH` may not.
    public var isIdempotent: Bool { method.isIdempotent }
    /// `nil` by default: the client's ``APIClient/Configuration/timeout`` applies.
    public var timeout: Duration? { nil }
    /// `200..<300` (any 2xx status), by default.
    public var acceptedStatuses: Range<Int> { 200..<300 }

    /// `METHOD /path`, how errors and logs name this endpoint (never with the query). Not a
    /// requirement, and internal, so that an endpoint's own `name` property cannot shadow it.
    var endpointName: String { "\(method.rawValue) \(path)" }
}

extension Endpoint where Response: Decodable {
    /// By default, the body decoded as JSON with the client's decoder (``ResponseDecoder/json(using:)``).
    public var responseDecoder: ResponseDecoder<Response> { .json() }
}

extension Endpoint where Response == Void {
    /// By default for a `Void` response, ``ResponseDecoder/empty``: the body is ignored.
    public var responseDecoder: ResponseDecoder<Response> { .empty }
}

extension Endpoint where Response == Data {
    /// By default for a `Data` response, ``ResponseDecoder/data``: the raw body, not decoded as JSON.
    public var responseDecoder: ResponseDecoder<Response> { .data }
}

/// The ``Endpoint/ErrorBody`` of an endpoint that declares none: error bodies are not decoded
/// (their message and an excerpt are in the ``HTTPError`` still).
public struct NoErrorBody: Decodable, Sendable {}
