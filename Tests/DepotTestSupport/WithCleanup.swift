import Foundation

/// Runs `body`, then `cleanup`, also when `body` throws: an asynchronous `defer` for test
/// fixtures (stop a server, drop a scratch schema, close a store).
///
/// ```swift
/// try await withCleanup {
///     try await body(store)
/// } cleanup: {
///     try? await store.dropSchema()
///     await store.close()
/// }
/// ```
public func withCleanup<T>(_ body: () async throws -> T, cleanup: () async -> Void) async throws -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}
