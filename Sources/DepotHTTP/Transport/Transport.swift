/// Sends a request over the network and returns the whole response.
///
/// Transports are deliberately thin: the ``APIClient`` owns the deadline, decompression, the
/// `User-Agent` and `Accept-Encoding` fields, retries and the mapping of errors, so that every
/// transport behaves the same. A transport must:
/// - return any status as a response (never throw for 4xx or 5xx);
/// - return the body with its content coding intact, or remove `Content-Encoding` if its
///   library decoded it;
/// - stop promptly, throwing, when its task is cancelled, or when the client's
///   ``TransportInterruption`` fires (the call's deadline);
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
///
/// The ``APIClient`` calls ``send(_:maximumBodySize:interruption:)``. Its default implementation
/// runs ``send(_:maximumBodySize:)`` in a task of its own and cancels that task when the
/// interruption fires, which costs a task and a thread hop per call; a transport whose library
/// can stop a request by a handle implements it directly (both built-in network transports do).
/// A transport that wraps another should forward both methods, or the wrapped transport's own
/// support is bypassed.
public protocol Transport: Sendable {
    /// Sends `request` and returns the response once its body has been received in full.
    ///
    /// - Parameters:
    ///   - request: The request to send, as the middleware chain left it.
    ///   - maximumBodySize: The largest body to accept, in bytes, as the transport receives it.
    /// - Returns: The response, whatever its status, with its body as received. A redirect is
    ///   returned, not followed: the ``APIClient`` follows it, dropping credentials when it leaves
    ///   their origin (a transport that followed it would carry them along).
    /// - Throws: Any error when no whole response arrives: ``HTTPError`` of kind
    ///   ``HTTPError/Kind/responseTooLarge`` for a body over `maximumBodySize`, otherwise
    ///   `CancellationError` or the library's own error, which the ``APIClient`` maps to a kind.
    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse

    /// Sends `request` like ``send(_:maximumBodySize:)`` and ends the exchange promptly, throwing
    /// (`CancellationError` by convention), when `interruption` fires.
    ///
    /// - Throws: What ``send(_:maximumBodySize:)`` throws; `CancellationError` (by convention)
    ///   when `interruption` fires, which the ``APIClient`` reports as ``HTTPError/Kind/timedOut``.
    func send(_ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption) async throws
        -> TransportResponse
}

extension Transport {
    /// Runs ``send(_:maximumBodySize:)`` in a task of its own and answers `CancellationError` as
    /// soon as `interruption` fires (or the calling task is cancelled), cancelling that task.
    ///
    /// - Throws: `CancellationError` when the interruption fires or the calling task is
    ///   cancelled first; otherwise what ``send(_:maximumBodySize:)`` throws.
    public func send(_ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption)
        async throws -> TransportResponse
    {
        try await interruption.race { try await self.send(request, maximumBodySize: maximumBodySize) }
    }
}
