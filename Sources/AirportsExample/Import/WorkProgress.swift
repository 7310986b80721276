/// Where a long piece of work stands: `airports import` and `airports sync` report it as they go,
/// and the command line draws it (a bar with rate and ETA on a terminal, plain lines otherwise).
///
/// ```swift
/// try await AirportImporter.run(csv: url, into: store) { progress in
///     print(progress.phase, progress.done, progress.total ?? -1)   // "parsing", 2000, 28298 …
/// }
/// ```
public struct WorkProgress: Sendable, Equatable {
    /// What is being done, as a verb a person reads: "parsing", "storing", "fetching".
    public var phase: String
    /// How many units of this phase are done.
    public var done: Int
    /// How many units the phase has, `nil` while unknown (a paged download).
    public var total: Int?
    /// What is counted, plural: "rows", "airports", "changes".
    public var unit: String

    /// Progress of `phase`: `done` of `total` `unit`.
    public init(phase: String, done: Int, total: Int?, unit: String) {
        self.phase = phase
        self.done = done
        self.total = total
        self.unit = unit
    }

    /// Whether the phase is complete: `done` has reached a known `total`.
    public var isComplete: Bool { total.map { done >= $0 } ?? false }
}

extension WorkProgress {
    /// How many items one write of a chunked phase carries (its progress moves by this much).
    static let chunkSize = 2_000

    /// Writes `items` in chunks of ``chunkSize`` with `write`, reporting `phase` to `progress`
    /// before the first chunk and after each: the "storing" phase of an import or a sync, inside
    /// its one transaction.
    static func chunked<Item: Sendable>(
        _ items: [Item], phase: String, unit: String, progress: (@Sendable (WorkProgress) -> Void)?,
        _ write: ([Item]) async throws -> Void
    ) async throws {
        progress?(WorkProgress(phase: phase, done: 0, total: items.count, unit: unit))
        for start in stride(from: 0, to: items.count, by: chunkSize) {
            let end = min(start + chunkSize, items.count)
            try await write(Array(items[start..<end]))
            progress?(WorkProgress(phase: phase, done: end, total: items.count, unit: unit))
        }
    }
}
