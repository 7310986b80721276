/// An HTTP request method.
///
/// The common methods are static members; any other token can be spelled out:
///
/// ```swift
/// let method: HTTPMethod = .patch
/// let purge = HTTPMethod("PURGE")
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as sent on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// A method from its token, e.g. `"GET"` (used as given: tokens are case-sensitive).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A method from its token, e.g. `HTTPMethod("PURGE")`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The method token, e.g. `GET`.
    public var description: String { rawValue }

    /// Whether repeating the request has the same effect as sending it once (RFC 9110, 9.2.2),
    /// which is what makes an automatic retry safe: true for GET, HEAD, PUT, DELETE, OPTIONS
    /// and TRACE; false for POST, PATCH and unknown methods.
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// `GET`
    public static let get = HTTPMethod("GET")
    /// `HEAD`
    public static let head = HTTPMethod("HEAD")
    /// `POST`
    public static let post = HTTPMethod("POST")
    /// `PUT`
    public static let put = HTTPMethod("PUT")
    /// `PATCH`
    public static let patch = HTTPMethod("PATCH")
    /// `DELETE`
    public static let delete = HTTPMethod("DELETE")
    /// `OPTIONS`
    public static let options = HTTPMethod("OPTIONS")
}
