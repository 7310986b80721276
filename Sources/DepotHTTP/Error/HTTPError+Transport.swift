import Foundation
import NIOCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(AsyncHTTPClient)
    import AsyncHTTPClient
    import NIOHTTP1
    import NIOPosix
#endif

extension HTTPError {
    /// Maps an error thrown by a transport to the one set of kinds every transport shares:
    /// `URLError.timedOut` and AsyncHTTPClient's `readTimeout` are both ``Kind/timedOut``,
    /// `URLError.cancelled` and `CancellationError` both ``Kind/cancelled``, and so on.
    ///
    /// An ``HTTPError`` passes through unchanged (its endpoint filled in when empty).
    static func mapping(_ error: any Error, endpoint: String) -> HTTPError {
        if var error = error as? HTTPError {
            if error.endpoint.isEmpty { error.endpoint = endpoint }
            return error
        }
        let (kind, detail) = classify(error)
        return HTTPError(kind, endpoint: endpoint, detail: detail, underlying: error)
    }

    private static func classify(_ error: any Error) -> (Kind, String) {
        if error is CancellationError { return (.cancelled, "the task was cancelled") }
        if let error = error as? URLError { return classify(error) }
        #if canImport(AsyncHTTPClient)
            if let error = error as? HTTPClientError { return classify(error) }
            if error is NIOConnectionError { return (.connectionFailed, "\(error)") }
            if let error = error as? HTTPParserError {
                // The connection closed before the promised body was complete.
                if case .invalidEOFState = error { return (.connectionFailed, "the connection closed mid-response") }
                return (.invalidResponse, "malformed HTTP: \(error)")
            }
        #endif
        if error is IOError || error is ChannelError { return (.connectionFailed, "\(error)") }
        return (.transportFailed, "\(error)")
    }

    private static func classify(_ error: URLError) -> (Kind, String) {
        let detail = "URLError \(error.code.rawValue): \(error.localizedDescription)"
        switch error.code {
        case .cancelled:
            return (.cancelled, detail)
        case .timedOut:
            return (.timedOut, detail)
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost,
            .notConnectedToInternet, .secureConnectionFailed, .cannotLoadFromNetwork:
            return (.connectionFailed, detail)
        case .badServerResponse, .zeroByteResource, .cannotDecodeRawData, .cannotDecodeContentData,
            .cannotParseResponse:
            // libcurl reports a connection closed before any response as a bad server response.
            return (.connectionFailed, detail)
        case .unknown:
            // libcurl's transfer errors without a Foundation code (a connection closed
            // mid-body is "transfer closed with N bytes remaining") arrive as unknown.
            return (.connectionFailed, detail)
        case .badURL, .unsupportedURL:
            return (.invalidRequest, detail)
        case .dataLengthExceedsMaximum:
            return (.responseTooLarge, detail)
        default:
            return (.transportFailed, detail)
        }
    }

    #if canImport(AsyncHTTPClient)
        private static func classify(_ error: HTTPClientError) -> (Kind, String) {
            let detail = "AsyncHTTPClient: \(error)"
            switch error {
            case .cancelled, .requestStreamCancelled:
                return (.cancelled, detail)
            case .readTimeout, .writeTimeout, .deadlineExceeded:
                return (.timedOut, detail)
            case .remoteConnectionClosed, .connectTimeout, .uncleanShutdown, .bodyLengthMismatch,
                .getConnectionFromPoolTimeout, .tlsHandshakeTimeout:
                return (.connectionFailed, detail)
            case .invalidURL, .emptyHost, .emptyScheme:
                return (.invalidRequest, detail)
            default:
                return (.transportFailed, detail)
            }
        }
    #endif
}

extension HTTPError {
    /// A body larger than the client's ``APIClient/Configuration/maximumResponseSize``, as every
    /// transport and the decompression step report it.
    static func responseTooLarge(limit: Int, status: Int, endpoint: String = "", decompressed: Bool = false)
        -> HTTPError
    {
        HTTPError(
            .responseTooLarge, endpoint: endpoint,
            detail: "the \(decompressed ? "decompressed " : "")body exceeds \(limit) bytes", status: status)
    }
}

extension HTTPError {
    /// A call that did not complete within its deadline.
    static func timedOut(endpoint: String, after timeout: Duration) -> HTTPError {
        HTTPError(.timedOut, endpoint: endpoint, detail: "no complete response within \(timeout.wholeMilliseconds) ms")
    }

    /// A call whose task was cancelled.
    static func cancelled(endpoint: String) -> HTTPError {
        HTTPError(.cancelled, endpoint: endpoint, detail: "the task was cancelled", underlying: CancellationError())
    }
}
