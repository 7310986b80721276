/// A first-come, first-served lock for async code: what serializes a store's transactions.
///
/// ```swift
/// let lock = AsyncLock()
/// try await lock.withLock {
///     // one task at a time here
/// }
/// ```
///
/// A task waiting for the lock stops waiting when it is cancelled (``withLock(_:)`` then throws
/// `CancellationError`). The lock is not reentrant: a task that already holds it and asks again
/// would wait for itself forever, so callers check ``isHeldByCurrentTask`` first and either go on
/// without locking (nested work of the same holder) or refuse with an error that names the
/// mistake — as stores do for `store.write` called inside their own transaction.
public final class AsyncLock: Sendable {
    private let permits = AsyncPermits(1)

    /// The locks the current task (or the task that started it) holds, by identity.
    @TaskLocal private static var held: Set<ObjectIdentifier> = []

    /// An unlocked lock.
    public init() {}

    /// Whether the current task holds this lock: it is running inside ``withLock(_:)`` of this
    /// lock, or was started as a child task (`async let`, a task group) of a task that is.
    public var isHeldByCurrentTask: Bool { Self.held.contains(ObjectIdentifier(self)) }

    /// Runs `body` holding the lock, then releases it, also when `body` throws.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while waiting for the lock (it
    ///   then never holds it); otherwise what `body` throws.
    public func withLock<T>(_ body: () async throws -> T) async throws -> T {
        try await lock()
        defer { unlock() }
        return try await Self.$held.withValue(Self.held.union([ObjectIdentifier(self)])) {
            try await body()
        }
    }

    /// Waits until the lock is free and takes it; pair it with ``unlock()``.
    ///
    /// Prefer ``withLock(_:)``, which also tells ``isHeldByCurrentTask``.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    public func lock() async throws { try await permits.acquire() }

    /// Releases the lock: the longest waiting task takes it next.
    public func unlock() { permits.release() }
}
