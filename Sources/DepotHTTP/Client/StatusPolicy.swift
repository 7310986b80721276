import Foundation

/// How a status the endpoint does not accept becomes an ``HTTPError``.
///
/// By default: 401 → ``HTTPError/Kind/unauthorized``, 403 → ``HTTPError/Kind/forbidden``,
/// 404 → ``HTTPError/Kind/notFound``, 426 and 501 → ``HTTPError/Kind/updateRequired``, any
/// other 5xx → ``HTTPError/Kind/serverError``, anything else →
/// ``HTTPError/Kind/unexpectedStatus``. Each error carries the server's message when the JSON
/// body holds one under a ``messageKeys`` key, and an excerpt of the body.
///
/// ```swift
/// var policy = StatusPolicy()
/// policy.messageKeys = ["ErrorMessage"]      // {"ErrorMessage": "No user 42"}
/// policy.updateRequiredStatuses = [426]
/// policy.overrides[402] = HTTPError.Kind("payment required")
/// ```
public struct StatusPolicy: Sendable {
    /// Top-level keys of a JSON error body whose string value is the server's message, tried
    /// in order.
    public var messageKeys: [String] = ["message", "ErrorMessage", "error_description", "error", "detail"]
    /// Statuses that mean "this app is too old for the server".
    public var updateRequiredStatuses: Set<Int> = [426, 501]
    /// Kinds for particular statuses, consulted first.
    public var overrides: [Int: HTTPError.Kind] = [:]

    /// The default policy.
    public init() {}

    /// The kind of error a non-accepted `status` is.
    public func kind(for status: Int) -> HTTPError.Kind {
        if let kind = overrides[status] { return kind }
        if updateRequiredStatuses.contains(status) { return .updateRequired }
        switch status {
        case 401: return .unauthorized
        case 403: return .forbidden
        case 404: return .notFound
        case 500..<600: return .serverError
        default: return .unexpectedStatus
        }
    }

    /// The server's message in a JSON error body, if it has one under a ``messageKeys`` key.
    ///
    /// Only a body that starts with `{` is read; the first key holding a non-empty string wins.
    /// `nil` when there is no such key or the body is not a JSON object.
    public func serverMessage(in body: Data) -> String? {
        guard body.first == UInt8(ascii: "{"),
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        else { return nil }
        for key in messageKeys {
            if let message = object[key] as? String, !message.isEmpty { return message }
        }
        return nil
    }

    /// The error for `response` to `endpoint` (`METHOD /path`): what the client throws for a
    /// status the endpoint does not accept, and what a ``ResponseDecoder`` that accepts more
    /// statuses throws for the ones it does not decode.
    ///
    /// ```swift
    /// ResponseDecoder<PushResult<Note>> { response, decoder in
    ///     switch response.status {
    ///     case 200..<300: return .applied
    ///     case 409: return .conflict(try decoder.decode(NoteConflict.self, from: response.body).remote)
    ///     default: throw StatusPolicy().error(for: response, endpoint: "POST /notes/7/changes")
    ///     }
    /// }
    /// ```
    public func error(for response: TransportResponse, endpoint: String) -> HTTPError {
        HTTPError(
            kind(for: response.status), endpoint: endpoint, status: response.status,
            serverMessage: serverMessage(in: response.body), bodyExcerpt: HTTPError.excerpt(of: response.body))
    }
}

extension HTTPError {
    /// The start of a body as text, for error messages.
    static func excerpt(of body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        let prefix = body.prefix(limit: bodyExcerptLength * 4)
        let text = String(decoding: prefix, as: UTF8.self)
        guard text.count > bodyExcerptLength || body.count > prefix.count else { return text }
        return String(text.prefix(bodyExcerptLength)) + "…"
    }
}

extension Data {
    fileprivate func prefix(limit: Int) -> Data { count > limit ? prefix(limit) : self }
}
