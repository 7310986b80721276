import Foundation

/// A response as a transport received it: status, header fields and the whole body.
///
/// Transports return the body with its content coding intact; the ``APIClient`` decodes
/// `gzip` and `deflate` itself. A transport whose library already decoded the body removes
/// the `Content-Encoding` field.
///
/// ```swift
/// let response = TransportResponse(status: 200, headers: ["Content-Type": "application/json"],
///                                  body: Data(#"{"id": 1}"#.utf8))
/// ```
public struct TransportResponse: Sendable {
    /// The status code, e.g. `200`.
    public var status: Int
    /// The header fields.
    public var headers: HeaderFields
    /// The body bytes (empty when there was none).
    public var body: Data

    /// A response from its parts.
    public init(status: Int, headers: HeaderFields = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
