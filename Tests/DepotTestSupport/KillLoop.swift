import DepotTesting
import Foundation
import Testing

/// Kills `depot-kill-probe` with SIGKILL at random moments while it writes, then reopens the store
/// in a fresh process that checks it (see `Tests/depot-kill-probe`): every transaction wholly
/// there or wholly absent, no acknowledged write lost, SQLite's integrity and foreign-key checks
/// clean, the migration ledger matching the tables, and the store taking the next write.
///
/// Seeded and bounded: `DEPOT_KILLS` sets the kills per scenario (10 unless set),
/// `DEPOT_KILL_SEED` replays a run (each run prints the seed it used).
public enum KillLoop {
    /// The scenarios `depot-kill-probe` knows: five kinds of write, three kinds of migration step.
    public static let scenarios = [
        "upserts", "replace", "partial", "cascade", "graph", "migrate-data", "migrate-add-column", "migrate-alter",
    ]

    /// Kills per scenario: `DEPOT_KILLS`, or 10 (the short form `.ci/run` runs).
    public static var kills: Int {
        ProcessInfo.processInfo.environment["DEPOT_KILLS"].flatMap(Int.init).map { max(1, $0) } ?? 10
    }

    /// What one scenario's loop did, for the figures the README reports.
    public struct Report: Sendable, CustomStringConvertible {
        /// The scenario's name.
        public var scenario: String
        /// How many times the probe was killed.
        public var kills = 0
        /// Kills that landed while a write or a migration step was under way: for a migration,
        /// after "started" and before "done"; for writes, every kill after "ready".
        public var inside = 0
        /// Writes the probe reported committed before it died, over all kills.
        public var acknowledged = 0
        /// Kills after which the store held one write more than the probe had reported: the kill
        /// fell between the commit and the report (committed, so it must stay).
        public var committedUnreported = 0
        /// The seed that replays the loop.
        public var seed: UInt64

        /// One line: the scenario, its counts and its seed.
        public var description: String {
            "\(scenario): \(kills) kills (\(inside) inside a write or step), \(acknowledged) writes acknowledged, "
                + "\(committedUnreported) committed but unreported, seed \(seed)"
        }
    }

    /// Runs one scenario's kill loop: `kills` times, start the probe on `location(k)`, kill it a
    /// random time after it is ready, and check the store with a fresh process.
    ///
    /// - Parameters:
    ///   - scenario: One of ``scenarios``.
    ///   - kills: How many kills.
    ///   - location: The probe's store arguments for kill `k` (`--store PATH` or `--postgres URL`);
    ///     a migration scenario needs a new, empty store each time.
    /// - Returns: What the loop did.
    /// - Throws: When the probe is not built or cannot start.
    public static func run(
        _ scenario: String, kills: Int = kills, location: @escaping @Sendable (Int) throws -> [String]
    ) async throws -> Report {
        let seed =
            ProcessInfo.processInfo.environment["DEPOT_KILL_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(state: seed)
        var report = Report(scenario: scenario, seed: seed)
        let migration = scenario.hasPrefix("migrate")
        // Writes: a kill up to 0.3 s after "ready" lands among many writes. A migration step lasts
        // a few tens of milliseconds: time one whole run, then kill within that time (shrinking it
        // when a kill comes too late).
        var window = 0.3
        if migration {
            let whole = try await runProbe(["run", scenario] + location(-1), killAfter: nil)
            let millis = whole.lines.last { $0.hasPrefix("done ") }.flatMap { Double($0.dropFirst(5)) }
            #expect(millis != nil, "an uninterrupted run of \(scenario) finishes: \(whole.output)")
            window = (millis ?? 100) / 1000 * 1.2
        }
        var lastGeneration = 0
        for kill in 0..<kills {
            let arguments = try location(kill)
            let delay = Double.random(in: 0...window, using: &random)
            let killed = try await runProbe(["run", scenario] + arguments, killAfter: delay)
            report.kills += 1
            let acknowledged =
                killed.lines.last { $0.hasPrefix("committed ") }.flatMap { Int($0.dropFirst(10)) } ?? lastGeneration
            report.acknowledged += killed.lines.filter { $0.hasPrefix("committed ") }.count
            if migration {
                let started = killed.lines.contains("started")
                let done = killed.lines.contains { $0.hasPrefix("done") }
                if started && !done { report.inside += 1 }
                if done { window *= 0.7 }
            } else if killed.lines.contains("ready") {
                report.inside += 1
            }
            let context = "\(scenario), kill \(kill + 1) of \(kills) after \(Int(delay * 1000)) ms, seed \(seed)"
            #expect(
                !killed.lines.contains { $0.hasPrefix("violation") || $0.hasPrefix("error") },
                "\(context): \(killed.output)")
            let checked = try await runProbe(["check", scenario] + arguments, killAfter: nil)
            #expect(checked.status == 0, "\(context): the check failed:\n\(checked.output)")
            guard
                let generation = checked.lines.first(where: { $0.hasPrefix("checked ") })
                    .flatMap({ Int($0.dropFirst(8)) })
            else {
                Issue.record("\(context): the check printed no generation:\n\(checked.output)")
                return report
            }
            #expect(checked.lines.contains { $0.hasPrefix("accepted ") }, "\(context): no write after the kill")
            if !migration {
                #expect(
                    generation >= acknowledged,
                    "\(context): write \(acknowledged) was acknowledged, the store holds \(generation)")
                if generation > acknowledged { report.committedUnreported += 1 }
                // The check's own write is the next generation.
                lastGeneration = generation + 1
            } else if killed.lines.contains(where: { $0.hasPrefix("done") }) {
                #expect(generation == 2, "\(context): the step reported done, the store is at version \(generation)")
            }
        }
        if migration {
            #expect(report.inside > 0, "no kill of \(scenario) landed inside the step (seed \(seed))")
        }
        return report
    }

    /// Runs the probe's check alone on a store (no kill): for tests that break a store on purpose
    /// and expect the check to say so.
    ///
    /// - Parameters:
    ///   - scenario: One of ``scenarios``.
    ///   - location: The store arguments (`--store PATH` or `--postgres URL`).
    /// - Returns: The check's exit status (0 when the invariant holds) and what it printed.
    /// - Throws: When the probe is not built or cannot start.
    public static func check(_ scenario: String, _ location: [String]) async throws -> (status: Int32, output: String) {
        let run = try await runProbe(["check", scenario] + location, killAfter: nil)
        return (run.status, run.output)
    }

    /// Runs the probe's writes for about `seconds`, then kills it.
    ///
    /// - Parameters:
    ///   - scenario: One of ``scenarios``.
    ///   - location: The store arguments (`--store PATH` or `--postgres URL`).
    ///   - seconds: How long after it is ready it is killed.
    /// - Returns: What it printed.
    /// - Throws: When the probe is not built or cannot start.
    public static func write(_ scenario: String, _ location: [String], for seconds: Double) async throws -> String {
        try await runProbe(["run", scenario] + location, killAfter: seconds).output
    }

    /// The probe's run: its exit status, all it printed, and its lines.
    struct ProbeRun {
        var status: Int32
        var output: String
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Runs the probe; with `killAfter`, kills it that many seconds after it prints "ready" (or
    /// when it ends, whichever comes first), otherwise waits for it to end.
    static func runProbe(_ arguments: [String], killAfter delay: Double?) async throws -> ProbeRun {
        // Its log lines go to standard error; only its reports are read.
        let run = try await runTestExecutable(
            "depot-kill-probe", arguments, killAfter: delay == nil ? nil : "ready\n", delay: delay ?? 0,
            mergingErrors: false)
        return ProbeRun(status: run.status, output: run.output)
    }
}
