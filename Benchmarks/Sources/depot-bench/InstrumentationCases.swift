import BenchHarness
import Depot
@_spi(Benchmarks) import DepotSQLite
import Foundation

// What logging, metrics and tracing cost a store when nothing is bootstrapped (issue #26: at most
// 1.02×): the store as users get it (swift-log's default handler at .info, swift-metrics' no-op
// factory, no tracer) against the same store made to skip every call to its instruments. The
// work is as many statements as possible, each on little data, where a per-statement cost shows
// most: finds by key (one SELECT each) and one-row upserts (BEGIN, INSERT, COMMIT each).
enum InstrumentationCases {
    @MainActor
    static func run(n: Int, rows: [BenchAirport]) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        let keys = rows.prefix(max(1, n / 20)).map(\.icao)
        if let result = try await compareInstruments(
            "no-op instruments: finds by key", n: keys.count, rows: rows,
            {
                repository in
                for key in keys {
                    guard try await repository.find(key) != nil else {
                        throw BenchError(description: "no-op instruments: \(key) not found")
                    }
                }
            })
        {
            results.append(result)
        }
        let edits = rows.prefix(max(1, n / 100)).map { row -> BenchAirport in
            var edited = row
            edited.elevation += 1
            return edited
        }
        if let result = try await compareInstruments(
            "no-op instruments: one-row upserts", n: edits.count, rows: rows,
            {
                repository in
                for edit in edits { try await repository.upsert([edit]) }
            })
        {
            results.append(result)
        }
        return results
    }

    /// Times `work` on a seeded store with its default instruments against a store without any,
    /// in interleaved rounds.
    @MainActor
    private static func compareInstruments(
        _ name: String, n: Int, rows: [BenchAirport],
        _ work: @escaping (Repository<BenchAirport>) async throws -> Void
    ) async throws -> BenchResult? {
        if !selected(name) { return nil }
        let aa = CommandLine.arguments.contains("--aa")
        func side(instrumented: Bool) -> () async throws -> Double {
            {
                let path = scratchPath()
                defer { removeDatabase(path) }
                try await SQLiteStore(path: path).repository(BenchAirport.self).insert(rows)
                // --aa: both sides without instruments, for this machine's noise floor.
                let store = try SQLiteStore(path: path, instrumented: instrumented && !aa)
                let repository = store.repository(BenchAirport.self)
                _ = try await repository.count()  // the one-time table check, outside the clock
                return try await BenchHarness.time { try await work(repository) }
            }
        }
        let medians = try await BenchHarness.compareWithFloor(
            rounds: 9, subject: side(instrumented: true), baseline: side(instrumented: false))
        var result = BenchResult(
            case: name, backend: "sqlite", n: n, subject: aa ? "depot (none, A/A)" : "depot (default instruments)",
            medianMilliseconds: medians.subject, baseline: "depot (none)", baselineMedianMilliseconds: medians.baseline)
        result.floor = medians.floor
        return result
    }
}
