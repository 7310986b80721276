import BenchHarness
import Depot
import DepotHTTP
import DepotSQLite
import DepotSync
import Foundation

// depot-sync-bench: DepotSync against raw baselines doing the same work, same process, interleaved
// rounds, medians; every round on a fresh database file. The airports feed is served by a
// Hummingbird server on 127.0.0.1 in this process (FeedServer), through AsyncHTTPClient.
// swift run -c release --package-path Benchmarks --scratch-path .build-bench-sync depot-sync-bench [--json]
//   [--rounds 5] [--edits 2000] [--page-size 5000] [--only "initial sync"] [--side subject|baseline] [--verbose]
//   | --statements

// MARK: - Harness

func scratchPath() -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "depot-sync-bench-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("bench.sqlite").path
}

func removeDatabase(_ path: String) {
    try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
}

/// `--only NAME` runs the cases whose name contains NAME.
let onlyCase: String? = BenchHarness.option("--only")
/// `--side subject|baseline` runs that side only (the other's figures are 0): for a profiler.
let onlySide: String? = BenchHarness.option("--side")

/// `--verbose`: every run's time on standard error.
let verbose = CommandLine.arguments.contains("--verbose")

/// One timed run and the HTTP requests it sent.
struct Run {
    var milliseconds: Double
    var requests: Int
}

/// Runs subject and baseline alternately (BenchHarness.interleave): one warm-up round, then
/// `rounds` timed rounds, each side on a fresh database file in a scratch folder of its own. Each
/// side sets up what it needs before the clock and times only the work (it returns the `Run`).
@MainActor
func compare(
    _ name: String, n: Int, rounds: Int, subjectName: String, subject: @escaping (String) async throws -> Run,
    baselineName: String, baseline: @escaping (String) async throws -> Run
) async throws -> BenchResult? {
    if let onlyCase, !name.contains(onlyCase) { return nil }
    func side(_ run: @escaping (String) async throws -> Run, skipped: Bool) -> () async throws -> Run {
        {
            if skipped { return Run(milliseconds: 0, requests: 0) }
            let path = scratchPath()
            defer { removeDatabase(path) }
            let result = try await run(path)
            if verbose {
                FileHandle.standardError.write(
                    Data(String(format: "%@: %.2f ms, %d requests\n", name, result.milliseconds, result.requests).utf8))
            }
            return result
        }
    }
    let baselineSide = side(baseline, skipped: onlySide == "subject")
    let runs = try await BenchHarness.interleave(
        rounds: rounds, [side(subject, skipped: onlySide == "baseline"), baselineSide, baselineSide])
    let requests = runs[0].map(\.requests).sorted()
    let baselineMedian = BenchHarness.median(runs[1].map(\.milliseconds))
    var result = BenchResult(
        case: name, backend: "sqlite", n: n, subject: subjectName,
        medianMilliseconds: BenchHarness.median(runs[0].map(\.milliseconds)), baseline: baselineName,
        baselineMedianMilliseconds: baselineMedian,
        requests: requests.contains { $0 > 0 } ? requests[requests.count / 2] : nil)
    // The baseline against itself: the case's A/A floor.
    result.floor = BenchHarness.floor(again: BenchHarness.median(runs[2].map(\.milliseconds)), baseline: baselineMedian)
    return result
}

/// What every case uses: the airports, the feed and the client that reads it.
@MainActor
struct Cases {
    let airports: [SyncAirport]
    let feed: FeedServer.Feed
    let transport: CountingTransport
    let client: APIClient
    let pageSize: Int
    let rounds: Int

    /// The requests sent through the client so far.
    var requests: Int { transport.count }

    func checkCount(_ count: Int, _ side: String) throws {
        guard count == airports.count else {
            throw BenchError(description: "\(side) holds \(count) airports after the sync, not \(airports.count)")
        }
    }

    // MARK: 1. Initial sync

    /// The whole feed into an empty file: `engine.sync()` against the same pages through the same
    /// client, inserted with the C API.
    func initialSync() async throws -> BenchResult? {
        try await compare(
            "initial sync, pages of \(pageSize)", n: airports.count, rounds: rounds,
            subjectName: "SyncEngine.sync",
            subject: { path in
                let store = try SQLiteStore(path: path)
                let engine = SyncEngine.airports(store: store, client: client, pageSize: pageSize)
                let before = requests
                let milliseconds = try await BenchHarness.time { try await engine.sync() }
                let sent = requests - before
                try checkCount(try await store.repository(SyncAirport.self).count(), "the engine's store")
                return Run(milliseconds: milliseconds, requests: sent)
            },
            baselineName: "APIClient+raw-c",
            baseline: { path in
                let database = RawDatabase(path: path)
                let before = requests
                let milliseconds = try await BenchHarness.time {
                    _ = try await database.pull(from: nil, client: client, pageSize: pageSize)
                }
                let sent = requests - before
                try checkCount(database.count(), "the raw database")
                return Run(milliseconds: milliseconds, requests: sent)
            })
    }

    // MARK: 2. Incremental sync

    /// After a full copy (untimed), the server changes one airport's name: one `engine.sync()`
    /// (an empty outbox, then the feed from its cursor) against the raw pull from the same cursor.
    func incrementalSync() async throws -> BenchResult? {
        let icao = changedKey
        return try await compare(
            "incremental sync, 1 change", n: 1, rounds: rounds, subjectName: "SyncEngine.sync",
            subject: { path in
                let store = try SQLiteStore(path: path)
                let engine = SyncEngine.airports(store: store, client: client, pageSize: pageSize)
                try await engine.sync()
                let name = change()
                let before = requests
                let milliseconds = try await BenchHarness.time { try await engine.sync() }
                let sent = requests - before
                let stored = try await store.repository(SyncAirport.self).find(icao)?.name
                guard stored == name else {
                    throw BenchError(description: "the engine stored '\(stored ?? "nil")', not '\(name)'")
                }
                return Run(milliseconds: milliseconds, requests: sent)
            },
            baselineName: "APIClient+raw-c",
            baseline: { path in
                let database = RawDatabase(path: path)
                let cursor = try await database.pull(from: nil, client: client, pageSize: pageSize)
                let name = change()
                let before = requests
                let milliseconds = try await BenchHarness.time {
                    _ = try await database.pull(from: cursor, client: client, pageSize: pageSize)
                }
                let sent = requests - before
                guard database.name(of: icao) == name else {
                    throw BenchError(description: "the raw database did not store '\(name)'")
                }
                return Run(milliseconds: milliseconds, requests: sent)
            })
    }

    // MARK: 3. Local edits

    /// `edits` single-row updates, each its own transaction, through `engine.store` (the outbox
    /// entry recorded in the same transaction; a local edit writes no shadow: its entry's base is
    /// the server's row) against the same updates on
    /// the plain SQLiteStore. Both files hold the airports, written before the clock, and one
    /// untimed edit of another airport first (the tables each side writes exist and are checked).
    func localEdits(_ edits: Int) async throws -> BenchResult? {
        let edited = editedAirports(edits)
        let warmUp = airports[1]
        func seed(_ path: String) async throws -> SQLiteStore {
            let store = try SQLiteStore(path: path)
            try await store.repository(SyncAirport.self).insert(airports)
            return store
        }
        return try await compare(
            "local edit, own transaction", n: edited.count, rounds: rounds, subjectName: "SyncedStore (outbox)",
            subject: { path in
                let store = try await seed(path)
                let engine = SyncEngine.airports(store: store, client: client, pageSize: pageSize)
                let repository = engine.store.repository(SyncAirport.self)
                try await edit(repository, [warmUp])
                let milliseconds = try await BenchHarness.time { try await edit(repository, edited) }
                let pending = try await engine.pendingChanges().count
                guard pending == edited.count + 1 else {
                    throw BenchError(description: "the outbox holds \(pending) edits, not \(edited.count + 1)")
                }
                return Run(milliseconds: milliseconds, requests: 0)
            },
            baselineName: "SQLiteStore",
            baseline: { path in
                let store = try await seed(path)
                let repository = store.repository(SyncAirport.self)
                try await edit(repository, [warmUp])
                let milliseconds = try await BenchHarness.time { try await edit(repository, edited) }
                return Run(milliseconds: milliseconds, requests: 0)
            })
    }
}

extension Cases {
    /// The airport whose name the server changes.
    var changedKey: String { airports.first { $0.icao == "ENGM" }?.icao ?? airports[airports.count / 2].icao }

    /// Changes the name of ``changedKey`` on the server; returns the new name.
    func change() -> String {
        let name = "Changed airport #\(feed.log.withLock { $0.count + 1 })"
        var record = AirportRecord(icao: changedKey)
        record.name = name
        feed.change(record)
        return name
    }

    /// `edits` airports spread over the whole table (none of them `airports[1]`, the warm-up's).
    func editedAirports(_ edits: Int) -> [SyncAirport] {
        let stride = max(2, airports.count / edits)
        return (0..<min(edits, airports.count / 2)).map { airports[$0 * stride] }
    }

    /// One transaction per airport: its name gets `suffix`.
    func edit(_ repository: Repository<SyncAirport>, _ airports: [SyncAirport], suffix: String = " ✎") async throws {
        for airport in airports {
            try await repository.update(where: \.icao == airport.icao, set: [.set(\.name, to: airport.name + suffix)])
        }
    }

    /// `--statements`: each subject once on a store that tallies its statements (slower than in
    /// the timed runs: every statement is logged).
    func statements(edits: Int) async throws {
        let tally = StatementTally()
        let path = scratchPath()
        defer { removeDatabase(path) }
        let store = try tally.store(path: path)
        let engine = SyncEngine.airports(store: store, client: client, pageSize: pageSize)
        var milliseconds = try await BenchHarness.time { try await engine.sync() }
        tally.report("initial sync (SyncEngine.sync)", elapsed: milliseconds)
        _ = change()
        milliseconds = try await BenchHarness.time { try await engine.sync() }
        tally.report("incremental sync, 1 change (SyncEngine.sync)", elapsed: milliseconds)
        let edited = editedAirports(edits)
        milliseconds = try await BenchHarness.time { try await edit(engine.store.repository(SyncAirport.self), edited) }
        tally.report("\(edited.count) local edits through engine.store", elapsed: milliseconds)
        milliseconds = try await BenchHarness.time {
            try await edit(store.repository(SyncAirport.self), edited, suffix: " ✎✎")
        }
        tally.report("\(edited.count) local edits through the plain store", elapsed: milliseconds)
    }
}

// MARK: - Main

@main
struct DepotSyncBench {
    @MainActor
    static func main() async throws {
        let json = CommandLine.arguments.contains("--json")
        let rounds = BenchHarness.intOption("--rounds") ?? BenchHarness.defaultRounds
        let edits = BenchHarness.intOption("--edits") ?? 2000
        let pageSize = BenchHarness.intOption("--page-size") ?? 5000
        if let onlySide, onlySide != "subject", onlySide != "baseline" {
            BenchHarness.usageError("--side needs subject or baseline, got '\(onlySide)'")
        }
        guard rounds > 0, edits > 0, pageSize > 0 else {
            BenchHarness.usageError("--rounds, --edits and --page-size need a positive number")
        }

        let airports = try loadAirports()
        let feed = try FeedServer.Feed(airports: airports, pageSize: pageSize)
        let server = try await FeedServer.start(feed)
        guard let baseURL = URL(string: "http://127.0.0.1:\(server.port)") else {
            await server.stop()
            throw BenchError(description: "no URL for port \(server.port)")
        }
        #if canImport(AsyncHTTPClient)
            let transport = CountingTransport(AsyncHTTPClientTransport.shared)
        #else
            let transport = CountingTransport(URLSessionTransport.shared)
        #endif
        let cases = Cases(
            airports: airports, feed: feed, transport: transport,
            client: APIClient(baseURL: baseURL, transport: transport), pageSize: pageSize, rounds: rounds)
        if !json {
            print(
                "depot-sync-bench: \(airports.count) airports, feed pages of \(pageSize) from Hummingbird on "
                    + "127.0.0.1:\(server.port) (in process), \(rounds) interleaved rounds after a warm-up round, "
                    + "medians, a fresh SQLite file per round\n")
        }

        if CommandLine.arguments.contains("--statements") {
            do {
                try await cases.statements(edits: edits)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            return
        }

        var results: [BenchResult] = []
        do {
            for result in [
                try await cases.initialSync(), try await cases.incrementalSync(), try await cases.localEdits(edits),
            ] {
                if let result { results.append(result) }
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()

        if json {
            try BenchHarness.writeJSONLines(results)
            return
        }
        print(
            "case".padding(toLength: 32, withPad: " ", startingAt: 0)
                + "n      subject               baseline          subject ms  base ms    ratio  requests")
        for result in results {
            print(
                result.case.padding(toLength: 32, withPad: " ", startingAt: 0)
                    + String(result.n).padding(toLength: 7, withPad: " ", startingAt: 0)
                    + result.subject.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + result.baseline.padding(toLength: 18, withPad: " ", startingAt: 0)
                    + String(
                        format: "%10.2f %8.2f %7.2f×", result.medianMilliseconds, result.baselineMedianMilliseconds,
                        result.ratio)
                    + (result.requests.map { String(format: "  %8d", $0) } ?? "") + result.floorNote)
        }
        if let peak = BenchHarness.peakRSSMegabytes() { print(String(format: "\npeak RSS: %.1f MB", peak)) }
    }
}
