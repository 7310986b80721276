import Foundation
import Logging

extension APIClient {
    /// Everything about a client but its base URL and transport.
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration()
    /// configuration.headers["Accept-Language"] = "nb"
    /// configuration.timeout = .seconds(10)
    /// configuration.decoder.dateDecodingStrategy = .iso8601
    /// configuration.middleware = [TokenAuthentication(tokens), LoggingMiddleware(logger: logger)]
    /// let client = APIClient(baseURL: url, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Header fields sent with every request (an endpoint's own fields replace them).
        public var headers: HeaderFields = ["Accept": "application/json"]
        /// The `User-Agent` field; an endpoint's own `User-Agent` header replaces it.
        public var userAgent = "DepotHTTP/1.0"
        /// The deadline for each call, retries included, unless the endpoint sets its own.
        public var timeout: Duration = .seconds(30)
        /// Decodes JSON responses unless an endpoint brings its own decoder.
        public var decoder = JSONDecoder()
        /// Encodes JSON bodies unless a body brings its own encoder.
        public var encoder = JSONEncoder()
        /// Which statuses become which errors.
        public var statusPolicy = StatusPolicy()
        /// When to send again.
        public var retryPolicy = RetryPolicy()
        /// The chain every request passes through, outermost first.
        public var middleware: [any Middleware] = []
        /// The largest body accepted, after decompression (64 MiB by default).
        public var maximumResponseSize = 64 << 20
        /// Where the client reports retries, at `debug` level (see ``LoggingMiddleware`` for
        /// requests and responses).
        public var logger: Logger?
        /// Where the client reports a span per request it sends, and whose context it puts in the
        /// request's header fields (``HTTPTracing``): the tracer swift-distributed-tracing is
        /// bootstrapped with when the configuration is made (none with the default no-op tracer).
        public var tracing: HTTPTracing = .bootstrapped
        /// Whether identical `GET` and `HEAD` calls in flight at once send one request (`false` by
        /// default): calls of the same endpoint path with the same URL, header fields and timeout
        /// wait for the first one's exchange (its middleware, retries and deadline), and each
        /// decodes the response itself. A caller whose task is cancelled leaves alone; the request
        /// is cancelled when the last caller leaves. A shared call runs in a task of its own, one
        /// hop later than a call run in the caller's task: on a busy machine a call with a deadline
        /// of a few milliseconds may reach the transport (or the token provider) later.
        ///
        /// The header fields compared are the endpoint's, before middleware: the shared exchange
        /// runs the first caller's middleware once. Leave this off on a client whose middleware
        /// adds per-caller headers (a server forwarding each end user's token, say, from a task
        /// local): a second caller would get the first caller's answer.
        public var sharesIdenticalRequests = false

        /// The default configuration.
        public init() {}

        /// A configuration with the settings given and defaults for the rest.
        public init(
            headers: HeaderFields = ["Accept": "application/json"], timeout: Duration = .seconds(30),
            retryPolicy: RetryPolicy = RetryPolicy(), middleware: [any Middleware] = []
        ) {
            self.headers = headers
            self.timeout = timeout
            self.retryPolicy = retryPolicy
            self.middleware = middleware
        }
    }
}
