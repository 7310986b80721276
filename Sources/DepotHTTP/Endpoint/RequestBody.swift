import Foundation

/// The body of a request: none, an `Encodable` as JSON, form fields, or raw bytes with their
/// content type.
///
/// ```swift
/// var body: RequestBody { .json(NewUser(name: "Ada")) }             // application/json
/// var body: RequestBody { .form([URLQueryItem(name: "q", value: "a b")]) }
/// var body: RequestBody { .data(png, contentType: "image/png") }
/// ```
public struct RequestBody: Sendable {
    enum Storage: Sendable {
        case none
        case json(encode: @Sendable (JSONEncoder) throws -> Data, encoder: JSONEncoder?)
        case form([URLQueryItem])
        case data(Data, contentType: String)
    }

    let storage: Storage

    /// No body.
    public static let empty = RequestBody(storage: .none)

    /// `value` encoded as JSON by the client's encoder, or by `encoder` when given;
    /// `Content-Type: application/json`.
    ///
    /// The value is encoded when the request is built; a failure makes the call throw an
    /// ``HTTPError`` of kind ``HTTPError/Kind/encodingFailed``, naming the coding path.
    public static func json(_ value: some Encodable & Sendable, encoder: JSONEncoder? = nil) -> RequestBody {
        RequestBody(storage: .json(encode: { try $0.encode(value) }, encoder: encoder))
    }

    /// Form fields, percent-encoded the same way as query items;
    /// `Content-Type: application/x-www-form-urlencoded`.
    public static func form(_ items: [URLQueryItem]) -> RequestBody {
        RequestBody(storage: .form(items))
    }

    /// Raw bytes sent as they are, with their content type.
    public static func data(_ data: Data, contentType: String) -> RequestBody {
        RequestBody(storage: .data(data, contentType: contentType))
    }

    /// Whether there is no body.
    public var isEmpty: Bool {
        if case .none = storage { return true }
        return false
    }

    /// The encoded bytes and their content type (`nil` for no body).
    func encoded(defaultEncoder: JSONEncoder) throws -> (data: Data, contentType: String)? {
        switch storage {
        case .none:
            return nil
        case .json(let encode, let encoder):
            return (try encode(encoder ?? defaultEncoder), "application/json")
        case .form(let items):
            return (Data(QueryEncoding.encode(items).utf8), "application/x-www-form-urlencoded")
        case .data(let data, let contentType):
            return (data, contentType)
        }
    }
}
