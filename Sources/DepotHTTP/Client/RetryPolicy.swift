import Foundation

/// When and how long to wait before sending a request again.
///
/// Only idempotent requests are retried (see ``Endpoint/isIdempotent``): after a transport
/// failure (no connection, a dropped connection), or a ``retryableStatuses`` status (408, 429,
/// 502, 503, 504). The wait grows exponentially from ``baseDelay`` with random jitter, capped at
/// ``maximumDelay``; a `Retry-After` field (seconds or an HTTP date) replaces it. A retry that
/// would start after the call's deadline is not attempted: the last answer stands.
///
/// ```swift
/// var retry = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(100))
/// retry.retryableStatuses.insert(500)
/// let client = APIClient(baseURL: url, configuration: .init(retryPolicy: retry))
/// ```
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included (1 disables retrying).
    public var maximumAttempts: Int
    /// The wait before the first retry; doubled for each further one.
    public var baseDelay: Duration
    /// The longest wait, whatever the backoff or `Retry-After` says.
    public var maximumDelay: Duration
    /// The fraction of each wait that is random: 0.5 waits between 50% and 100% of the
    /// backoff, so that clients that failed together do not retry together.
    public var jitter: Double
    /// The statuses worth another attempt.
    public var retryableStatuses: Set<Int> = [408, 429, 502, 503, 504]
    /// Whether a `Retry-After` field sets the wait.
    public var honorsRetryAfter = true
    /// How the client waits; replace it in tests to record waits instead of sleeping.
    public var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// A policy; by default three attempts, waiting 100–200 ms before the second and 200–400 ms
    /// before the third (a backoff of 200 ms, then 400 ms, less up to half of it as jitter).
    ///
    /// - Parameters:
    ///   - maximumAttempts: Attempts in all, the first included; at least 1 (1 disables retrying).
    ///   - baseDelay: The backoff before the first retry, doubled for each further one.
    ///   - maximumDelay: The longest wait, whatever the backoff or a `Retry-After` field says.
    ///   - jitter: The random fraction of each backoff, from 0 (none) to 1.
    ///
    /// Values out of range are taken at the nearest valid one, here and when the properties are
    /// set later: `maximumAttempts` below 1 as 1, a negative delay as zero, a `jitter` outside
    /// `0...1` (or NaN) as the nearest bound (NaN as 0).
    public init(
        maximumAttempts: Int = 3, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(30),
        jitter: Double = 0.5
    ) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
    }

    /// Never retry.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// The wait before attempt `attempt + 1` after attempt `attempt` (1-based) answered
    /// `response` (or failed, when `nil`).
    ///
    /// A `Retry-After` field in `response` (when ``honorsRetryAfter``) sets the wait, without
    /// jitter; otherwise it is ``baseDelay`` doubled per earlier retry, less up to ``jitter`` of
    /// it at random. Either way it is at most ``maximumDelay``.
    ///
    /// - Parameters:
    ///   - attempt: The attempt that just ended, from 1.
    ///   - response: Its response, or `nil` when it failed without one.
    ///   - now: The time a `Retry-After` date is measured from.
    /// - Returns: How long to wait before the next attempt.
    public func delay(afterAttempt attempt: Int, response: TransportResponse?, now: Date = Date()) -> Duration {
        if honorsRetryAfter, let value = response?.headers["Retry-After"],
            let retryAfter = Self.parseRetryAfter(value, now: now)
        {
            return max(min(retryAfter, maximumDelay), .zero)
        }
        let limit = max(maximumDelay, .zero)
        let base = max(baseDelay, .zero)
        let factor = pow(2, Double(min(max(attempt - 1, 0), 30)))
        // Compared in seconds first: a huge base delay doubled 30 times must not overflow `Duration`.
        let backoff = base.seconds * factor >= limit.seconds ? limit : base * factor
        let jitter = jitter.isNaN ? 0 : min(max(jitter, 0), 1)
        return backoff * (1 - jitter * Double.random(in: 0..<1))
    }

    /// `Retry-After` as delta-seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
    static func parseRetryAfter(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}
