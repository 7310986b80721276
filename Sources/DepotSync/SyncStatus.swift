import Depot
import Foundation
import Observation

/// Where syncing stands: what waits to be pushed, when the feeds were last pulled, the last error.
public struct SyncStatus: Sendable, Equatable {
    /// Local edits waiting to be pushed (rejected ones not included).
    public var pendingChanges: Int
    /// Local edits the server refused, kept until the app discards, retries or rebases them.
    public var rejectedChanges: Int
    /// When a feed page was last stored (this process); `nil` before the first.
    public var lastPull: Date?
    /// When the server last applied a pushed edit (this process).
    public var lastPush: Date?
    /// The error that stopped the last sync; `nil` once a sync succeeds.
    public var lastError: String?
    /// Whether a sync is running.
    public var isSyncing: Bool

    /// A status from its parts.
    public init(
        pendingChanges: Int = 0, rejectedChanges: Int = 0, lastPull: Date? = nil, lastPush: Date? = nil,
        lastError: String? = nil, isSyncing: Bool = false
    ) {
        self.pendingChanges = pendingChanges
        self.rejectedChanges = rejectedChanges
        self.lastPull = lastPull
        self.lastPush = lastPush
        self.lastError = lastError
        self.isSyncing = isSyncing
    }
}

extension SyncEngine {
    /// The status now.
    public func status() async throws -> SyncStatus {
        let outbox = base.repository(OutboxEntry.self)
        let rejected = try await outbox.count(where: \.rejection != nil)
        let all = try await outbox.count()
        let lastPull = try await base.repository(FeedCursor.self).max(\.pulledAt)
        return state.withLock { state in
            SyncStatus(
                pendingChanges: all - rejected, rejectedChanges: rejected, lastPull: state.lastPull ?? lastPull,
                lastPush: state.lastPush, lastError: state.lastError, isSyncing: state.isSyncing)
        }
    }

    /// The status now, then again whenever it may have changed (a local edit committed, a sync
    /// started, stored a page, pushed an edit or ended). Ends when the task iterating it is
    /// cancelled.
    ///
    /// ```swift
    /// for try await status in engine.statusUpdates() {
    ///     badge.text = status.pendingChanges == 0 ? "" : "\(status.pendingChanges)"
    /// }
    /// ```
    public func statusUpdates() -> AsyncThrowingStream<SyncStatus, any Error> {
        // The engine's own changes and commits of the sync tables, merged into one "read again".
        let (events, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let engineChanges = stateChanges.subscribe()
        let commits = base.commits()
        let watched: Set<String> = [OutboxEntry.schema.tableName, FeedCursor.schema.tableName]
        let forwardCommits = Task {
            for await commit in commits where commit.mayHaveChanged(anyOf: watched) { continuation.yield() }
        }
        let forwardChanges = Task { for await _ in engineChanges { continuation.yield() } }
        continuation.yield()
        return AsyncThrowingStream { output in
            let task = Task {
                var last: SyncStatus?
                do {
                    for await _ in events {
                        let status = try await self.status()
                        if status != last { output.yield(status) }
                        last = status
                    }
                    output.finish()
                } catch {
                    output.finish(throwing: error)
                }
            }
            output.onTermination = { _ in
                task.cancel()
                forwardCommits.cancel()
                forwardChanges.cancel()
                continuation.finish()
            }
        }
    }
}

/// The sync status as an `@Observable` object, for views.
///
/// ```swift
/// @State var sync = LiveSyncStatus(engine)
/// var body: some View { Text(sync.status.pendingChanges == 0 ? "Synced" : "Waiting to sync") }
/// ```
/// It starts observing when one of its properties is first read, and stops when released or on
/// ``stop()``.
@MainActor
@Observable
public final class LiveSyncStatus {
    /// The latest status.
    public var status: SyncStatus {
        runner.startIfNeeded()
        return latest
    }
    /// The error that ended the observation, if any.
    public var error: (any Error)? {
        runner.startIfNeeded()
        return failure
    }

    private var latest = SyncStatus()
    private var failure: (any Error)?
    @ObservationIgnored private var runner: LiveRunner!

    /// Observes `engine`'s status (from the first read of a property on).
    public init(_ engine: SyncEngine) {
        runner = LiveRunner(
            { engine.statusUpdates() },
            receive: { [weak self] status in
                guard let self else { return false }
                self.latest = status
                return true
            },
            fail: { [weak self] error in self?.failure = error })
    }

    /// Stops observing; ``status`` keeps its last value.
    public func stop() { runner.stop() }
}
