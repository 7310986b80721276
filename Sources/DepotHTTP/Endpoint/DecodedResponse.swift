import Foundation

/// A decoded value together with the response it came from.
///
/// ```swift
/// struct GetUser: Endpoint {
///     typealias Response = DecodedResponse<User>
///     let id: Int
///     var path: String { "/users/\(id)" }
///     var responseDecoder: ResponseDecoder<Response> { .withMetadata(.json()) }
/// }
/// let response = try await client.send(GetUser(id: 1))
/// print(response.value.name, response.status, response.headers["ETag"] ?? "-")
/// ```
public struct DecodedResponse<Value: Sendable>: Sendable {
    /// The decoded value.
    public var value: Value
    /// The status code.
    public var status: Int
    /// The response's header fields.
    public var headers: HeaderFields
    /// The body bytes (decompressed).
    public var data: Data

    /// A response from its parts.
    public init(value: Value, status: Int, headers: HeaderFields, data: Data) {
        self.value = value
        self.status = status
        self.headers = headers
        self.data = data
    }
}
