import Foundation

/// How a response body becomes an endpoint's `Response`.
///
/// Endpoints whose `Response` is `Decodable` get ``json(using:)`` with the client's decoder by
/// default. Override ``Endpoint/responseDecoder`` for anything else:
///
/// ```swift
/// struct ListUsers: Endpoint {
///     typealias Response = [User]
///     var path: String { "/users" }
///     var responseDecoder: ResponseDecoder<[User]> { .json(wrappedIn: "data") }  // {"data": [...]}
/// }
///
/// struct DeleteUser: Endpoint {
///     typealias Response = Void
///     let id: Int
///     var method: HTTPMethod { .delete }
///     var path: String { "/users/\(id)" }
///     // Void responses default to .empty: the body is ignored.
/// }
/// ```
///
/// A thrown `DecodingError` becomes an ``HTTPError`` of kind ``HTTPError/Kind/decodingFailed``
/// naming the endpoint, the coding path and the start of the body.
public struct ResponseDecoder<Output: Sendable>: Sendable {
    private let body: @Sendable (TransportResponse, JSONDecoder) throws -> Output

    /// A decoder from a function of the response and the client's JSON decoder.
    ///
    /// The function sees the response after decompression. An ``HTTPError`` it throws reaches
    /// the caller as it is; any other error becomes one of kind ``HTTPError/Kind/decodingFailed``.
    ///
    /// ```swift
    /// let count = ResponseDecoder<Int> { response, _ in
    ///     Int(response.headers["X-Total-Count"] ?? "") ?? 0
    /// }
    /// ```
    public init(
        _ decode: @escaping @Sendable (_ response: TransportResponse, _ clientDecoder: JSONDecoder) throws -> Output
    ) {
        body = decode
    }

    /// Decodes `response`, using `clientDecoder` where the decoder wants the client's.
    ///
    /// - Parameters:
    ///   - response: An accepted, decompressed response.
    ///   - clientDecoder: The JSON decoder to use unless the decoder brings its own.
    /// - Returns: The decoded value.
    /// - Throws: Whatever the decoding function throws, e.g. a `DecodingError`; ``APIClient``
    ///   wraps it in an ``HTTPError`` of kind ``HTTPError/Kind/decodingFailed``.
    public func decode(_ response: TransportResponse, clientDecoder: JSONDecoder) throws -> Output {
        try body(response, clientDecoder)
    }

    /// A decoder that transforms this one's output.
    ///
    /// An error `transform` throws fails the call as a decoding error does: with an ``HTTPError``
    /// of kind ``HTTPError/Kind/decodingFailed`` (an ``HTTPError`` it throws passes through).
    ///
    /// ```swift
    /// let names = ResponseDecoder<[User]>.json().map { $0.map(\.name) }
    /// ```
    public func map<NewOutput: Sendable>(
        _ transform: @escaping @Sendable (Output) throws -> NewOutput
    ) -> ResponseDecoder<NewOutput> {
        ResponseDecoder<NewOutput> { response, decoder in try transform(body(response, decoder)) }
    }
}

extension ResponseDecoder where Output: Decodable {
    /// The body as JSON, decoded with `decoder`, or with the client's when `nil`.
    public static func json(using decoder: JSONDecoder? = nil) -> ResponseDecoder {
        ResponseDecoder { response, clientDecoder in
            try (decoder ?? clientDecoder).decode(Output.self, from: response.body)
        }
    }

    /// The value under `key` of a JSON object, e.g. `{"data": …}`; the object's other
    /// members are ignored.
    public static func json(wrappedIn key: String, using decoder: JSONDecoder? = nil) -> ResponseDecoder {
        ResponseDecoder { response, clientDecoder in
            try EnvelopeKey.$current.withValue(key) {
                try (decoder ?? clientDecoder).decode(Envelope<Output>.self, from: response.body).value
            }
        }
    }
}

extension ResponseDecoder where Output == Void {
    /// Ignores the body (for `204 No Content` and other answers without a payload).
    public static var empty: ResponseDecoder { ResponseDecoder { _, _ in () } }
}

extension ResponseDecoder where Output == Data {
    /// The raw body bytes (decompressed).
    public static var data: ResponseDecoder { ResponseDecoder { response, _ in response.body } }
}

extension ResponseDecoder where Output == String {
    /// The body as UTF-8 text (invalid sequences replaced).
    public static var text: ResponseDecoder {
        ResponseDecoder { response, _ in String(decoding: response.body, as: UTF8.self) }
    }
}

extension ResponseDecoder {
    /// The value `inner` decodes, together with the status, header fields and raw body.
    ///
    /// ```swift
    /// var responseDecoder: ResponseDecoder<DecodedResponse<User>> { .withMetadata(.json()) }
    /// ```
    public static func withMetadata<Value>(_ inner: ResponseDecoder<Value>) -> ResponseDecoder
    where Output == DecodedResponse<Value> {
        ResponseDecoder { response, decoder in
            DecodedResponse(
                value: try inner.decode(response, clientDecoder: decoder), status: response.status,
                headers: response.headers, data: response.body)
        }
    }
}

/// `{ key: Value }` for a key chosen at decoding time.
private struct Envelope<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        value = try container.decode(Value.self, forKey: AnyCodingKey(stringValue: EnvelopeKey.current))
    }
}

/// The envelope's key: a task-local, since `Decodable.init` takes no parameters and a shared
/// `JSONDecoder`'s `userInfo` must not be mutated.
private enum EnvelopeKey {
    @TaskLocal static var current = "data"
}

private struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
