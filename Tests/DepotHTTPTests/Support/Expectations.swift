import DepotHTTP
import Testing

/// Runs `body`, expecting it to throw an ``HTTPError``; returns it (or records an issue).
func httpError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> HTTPError? {
    do {
        let value = try await body()
        Issue.record("expected an HTTPError, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as HTTPError {
        return error
    } catch {
        Issue.record("expected an HTTPError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
