import Foundation

extension APIClient {
    /// The request `endpoint` describes, resolved against the base URL.
    ///
    /// ```swift
    /// let request = try client.makeRequest(for: Search(text: "a+b c"))
    /// // GET https://api.example.com/v1/search?q=a%2Bb%20c
    /// ```
    ///
    /// The request carries the configured headers, `User-Agent`, `Accept-Encoding`, the body's
    /// `Content-Type` and the endpoint's own headers, as the transport would receive it before
    /// any middleware; nothing is sent.
    ///
    /// - Throws: An ``HTTPError`` of kind ``HTTPError/Kind/invalidRequest`` when the base URL has
    ///   a query or fragment or the two make no valid URL, or of kind
    ///   ``HTTPError/Kind/encodingFailed`` when the body cannot be encoded.
    public func makeRequest<E: Endpoint>(for endpoint: E) throws -> TransportRequest {
        try makeRequest(for: endpoint, named: endpoint.endpointName)
    }

    func makeRequest<E: Endpoint>(for endpoint: E, named name: String) throws -> TransportRequest {
        let baseURL = endpoint.baseURL ?? self.baseURL
        guard baseURL.query == nil, baseURL.fragment == nil else {
            throw HTTPError(
                .invalidRequest, endpoint: name,
                detail: "the base URL \(baseURL) has a query or fragment; endpoint paths and queries cannot follow it "
                    + "(put query items in the endpoints or a middleware)")
        }
        var text = endpoint.baseURL.map(Self.trimmed) ?? baseURLString
        let path = QueryEncoding.escapePath(endpoint.path)
        if !path.isEmpty, !path.hasPrefix("/") { text += "/" }
        text += path
        let query = endpoint.query
        if !query.isEmpty { text += "?" + QueryEncoding.encode(query) }
        guard let url = URL(string: text) else {
            throw HTTPError(.invalidRequest, endpoint: name, detail: "\(baseURL) and \(path) make no valid URL")
        }
        var headers = baseHeaders
        var body: Data?
        do {
            if let (data, contentType) = try endpoint.body.encoded(defaultEncoder: configuration.encoder) {
                headers["Content-Type"] = contentType
                body = data
            }
        } catch let error as EncodingError {
            let (path, detail) = Self.describe(error)
            throw HTTPError(
                .encodingFailed, endpoint: name, detail: "the body could not be encoded: \(detail)", codingPath: path,
                underlying: error)
        } catch {
            throw HTTPError(
                .encodingFailed, endpoint: name, detail: "the body could not be encoded: \(error)", underlying: error)
        }
        let extra = endpoint.headers
        if extra.count > 0 { headers.merge(extra) }
        return TransportRequest(method: endpoint.method, url: url, headers: headers, body: body)
    }

    /// `url` as text without its trailing slashes.
    static func trimmed(_ url: URL) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// Decodes an accepted response, naming the endpoint, the coding path and the body on failure.
    func decode<Output>(_ response: TransportResponse, with decoder: ResponseDecoder<Output>, endpoint: String)
        throws -> Output
    {
        do {
            return try decoder.decode(response, clientDecoder: configuration.decoder)
        } catch let error as HTTPError {
            throw error
        } catch let error as DecodingError {
            let (path, detail) = Self.describe(error)
            throw HTTPError(
                .decodingFailed, endpoint: endpoint, detail: "\(Output.self): \(detail)", status: response.status,
                bodyExcerpt: HTTPError.excerpt(of: response.body), codingPath: path, underlying: error)
        } catch {
            throw HTTPError(
                .decodingFailed, endpoint: endpoint, detail: "\(Output.self): \(error)", status: response.status,
                bodyExcerpt: HTTPError.excerpt(of: response.body), underlying: error)
        }
    }

    // MARK: - Coding paths

    /// `data.items[2].name` for a coding path.
    static func describe(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }

    static func describe(_ error: DecodingError) -> (path: String, detail: String) {
        switch error {
        case .keyNotFound(let key, let context):
            return (describe(context.codingPath + [key]), "the key is missing")
        case .typeMismatch(let type, let context):
            return (describe(context.codingPath), "expected \(type): \(context.debugDescription)")
        case .valueNotFound(let type, let context):
            return (describe(context.codingPath), "expected \(type), found null")
        case .dataCorrupted(let context):
            return (describe(context.codingPath), context.debugDescription)
        @unknown default:
            return ("", "\(error)")
        }
    }

    static func describe(_ error: EncodingError) -> (path: String, detail: String) {
        switch error {
        case .invalidValue(_, let context):
            // The value itself is not printed: it may be a secret.
            return (describe(context.codingPath), context.debugDescription)
        @unknown default:
            return ("", "\(error)")
        }
    }
}
