import BenchHarness
import Depot
import DepotSQLite
import Foundation

// Observation (issue #10): how long a 1-row update takes to reach an observer, and what ten
// observers cost the writer. SQLite file databases, release build.

/// Latency percentiles of `samples` (milliseconds): p50 and p99.
func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
    return (at(0.5), at(0.99))
}

enum ObservationCases {
    /// Update-to-observer latency: the clock starts before a 1-row upsert and stops when the
    /// observer of `filter` holds the new result (commit, announcement, re-query, diff, decode).
    ///
    /// Baseline: what a hand-rolled observer must at least do in raw C — the same 1-row upsert in
    /// a transaction, then the same query re-run. The two sides alternate update by update.
    @MainActor
    static func latency(
        _ name: String, n: Int, rows: [BenchAirport], updates: Int,
        filter: Filter<BenchAirport>?, rawWhere: String, rawArguments: [String],
        updatable: [BenchAirport]
    ) async throws -> BenchResult? {
        if !selected(name) { return nil }
        let clock = ContinuousClock()
        let depotPath = scratchPath()
        let rawPath = scratchPath()
        defer {
            removeDatabase(depotPath)
            removeDatabase(rawPath)
        }
        let store = try SQLiteStore(path: depotPath)
        let airports = store.repository(BenchAirport.self)
        try await airports.insert(rows)
        let raw = RawDatabase(path: rawPath)
        raw.write(rows, upsert: false)

        let (arrivals, arrived) = AsyncStream<ContinuousClock.Instant>.makeStream()
        let observation = airports.changes(where: filter, orderBy: [.ascending(\.icao)])
        let consumer = Task {
            for try await _ in observation { arrived.yield(clock.now) }
        }
        defer { consumer.cancel() }
        var next = arrivals.makeAsyncIterator()
        _ = await next.next()  // the first result

        var depotSamples: [Double] = []
        var rawSamples: [Double] = []
        var againSamples: [Double] = []
        let rawQuery = RawDatabase.selectAll + rawWhere + " ORDER BY \"icao\""
        for update in 0..<(updates + 10) {
            var row = updatable[update % updatable.count]
            row.elevation += Double(update + 1)
            let started = clock.now
            try await airports.upsert(row)
            guard let seen = await next.next() else { throw BenchError(description: "\(name): observation ended") }
            let rawStarted = clock.now
            raw.write([row], upsert: true)
            _ = raw.fetch(rawQuery, rawArguments)
            let rawEnded = clock.now
            // The baseline once more (another change to the row): its A/A floor.
            row.elevation += 0.5
            raw.write([row], upsert: true)
            _ = raw.fetch(rawQuery, rawArguments)
            let againEnded = clock.now
            if update >= 10 {  // the first ten warm up
                depotSamples.append(BenchHarness.milliseconds(seen - started))
                rawSamples.append(BenchHarness.milliseconds(rawEnded - rawStarted))
                againSamples.append(BenchHarness.milliseconds(againEnded - rawEnded))
            }
        }
        let depot = percentiles(depotSamples)
        let baseline = percentiles(rawSamples)
        var result = BenchResult(
            case: name, backend: "sqlite", n: n, subject: "depot-observer", medianMilliseconds: depot.p50,
            baseline: "raw-c-write+refetch", baselineMedianMilliseconds: baseline.p50,
            latency: .init(
                p50Milliseconds: depot.p50, p99Milliseconds: depot.p99,
                requestsPerSecond: 1000 / (depotSamples.reduce(0, +) / Double(depotSamples.count)),
                baselineP50Milliseconds: baseline.p50, baselineP99Milliseconds: baseline.p99,
                baselineRequestsPerSecond: 1000 / (rawSamples.reduce(0, +) / Double(rawSamples.count))))
        result.floor = BenchHarness.floor(again: percentiles(againSamples).p50, baseline: baseline.p50)
        return result
    }

    /// Write throughput with ten observers (each of one country's airports, so every commit
    /// wakes all ten and re-runs ten queries) against the same writes with nobody observing:
    /// `writes` 1-row upserts, one transaction each, rounds interleaved.
    @MainActor
    static func throughput(n: Int, rows: [BenchAirport], writes: Int) async throws -> BenchResult? {
        let name = "10 observers: 1-row writes"
        if !selected(name) { return nil }
        let countries = ["NO", "SE", "DK", "FI", "DE", "FR", "GB", "ES", "IT", "PL"]
        let targets = Array(rows.filter { countries.contains($0.country) }.prefix(writes))
        func run(observers: Int) async throws -> Double {
            let path = scratchPath()
            defer { removeDatabase(path) }
            let store = try SQLiteStore(path: path)
            let airports = store.repository(BenchAirport.self)
            try await airports.insert(rows)
            let (ready, started) = AsyncStream<Void>.makeStream()
            let consumers = countries.prefix(observers).map { country in
                Task {
                    for try await _ in airports.observe(where: \.country == country) { started.yield() }
                }
            }
            defer { consumers.forEach { $0.cancel() } }
            var readiness = ready.makeAsyncIterator()
            for _ in 0..<observers { _ = await readiness.next() }
            return try await BenchHarness.time {
                for (index, var row) in targets.enumerated() {
                    row.elevation += Double(index + 1)
                    try await airports.upsert(row)
                }
            }
        }
        let medians = try await BenchHarness.compareWithFloor(
            subject: { try await run(observers: 10) }, baseline: { try await run(observers: 0) })
        var result = BenchResult(
            case: name, backend: "sqlite", n: n, subject: "depot-10-observers", medianMilliseconds: medians.subject,
            baseline: "depot-no-observer", baselineMedianMilliseconds: medians.baseline)
        result.floor = medians.floor
        return result
    }

    @MainActor
    static func run(n: Int, rows: [BenchAirport]) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        let norwegian = rows.filter { $0.country == "NO" }
        results.appendIfPresent(
            try await latency(
                "observe NO: 1-row update", n: n, rows: rows, updates: 300, filter: \.country == "NO",
                rawWhere: " WHERE \"country\" = ?", rawArguments: ["NO"], updatable: norwegian))
        results.appendIfPresent(
            try await latency(
                "observe all: 1-row update", n: n, rows: rows, updates: n >= 100_000 ? 60 : 200, filter: nil,
                rawWhere: "", rawArguments: [], updatable: rows))
        results.appendIfPresent(try await throughput(n: n, rows: rows, writes: 500))
        return results
    }
}
