import Foundation

/// Runs `work` on a thread of its own and waits for it: CPU-heavy checks (a loop over every
/// Unicode scalar) and blocking calls stay off Swift's cooperative pool, which has as many threads
/// as cores (two in CI) and would otherwise starve every other test running beside them — a
/// stubbed call then misses its deadline without doing anything wrong.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
