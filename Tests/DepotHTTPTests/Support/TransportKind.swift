import DepotHTTP
import Foundation
import Testing

/// The real transports the shared transport suite runs on.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case asyncHTTPClient
    case urlSession

    /// The real transports available on this platform.
    static var available: [TransportKind] {
        #if canImport(AsyncHTTPClient)
            allCases
        #else
            [.urlSession]
        #endif
    }

    var testDescription: String {
        switch self {
        case .asyncHTTPClient: "AsyncHTTPClient"
        case .urlSession: "URLSession"
        }
    }

    /// One transport per kind for the whole run (connections are reused across tests).
    var transport: any Transport {
        switch self {
        case .asyncHTTPClient:
            #if canImport(AsyncHTTPClient)
                AsyncHTTPClientTransport.shared
            #else
                URLSessionTransport.shared
            #endif
        case .urlSession:
            URLSessionTransport.shared
        }
    }

    /// A client of the Hummingbird test server on this transport: a 600 s deadline (an outer
    /// bound) and retries with 5 ms backoff unless `configure` says otherwise.
    func client(
        of baseURL: URL? = nil, _ configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) async throws -> APIClient {
        var configuration = APIClient.Configuration.testing()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(5))
        configure(&configuration)
        let url: URL
        if let baseURL {
            url = baseURL
        } else {
            url = try await TestServer.shared().baseURL
        }
        return APIClient(baseURL: url, transport: transport, configuration: configuration)
    }
}
