/// Sends a request over the network and returns the whole response.
///
/// Transports are deliberately thin: the ``APIClient`` owns the deadline, decompression, the
/// `User-Agent` and `Accept-Encoding` fields, retries and the mapping of errors, so that every
/// transport behaves the same. A transport must:
/// - return any status as a response (never throw for 4xx or 5xx);
/// - return the body with its content coding intact, or remove `Content-Encoding` if its
///   library decoded it;
/// - stop promptly, throwing, when its task is cancelled;
/// - refuse bodies larger than `maximumBodySize` by throwing ``HTTPError`` with kind
///   ``HTTPError/Kind/responseTooLarge`` (or any error; the client maps it).
///
/// ```swift
/// struct EchoTransport: Transport {
///     func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse {
///         TransportResponse(status: 200, body: request.body ?? Data())
///     }
/// }
/// ```
public protocol Transport: Sendable {
    /// Sends `request` and returns the response once its body has been received in full.
    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse
}
