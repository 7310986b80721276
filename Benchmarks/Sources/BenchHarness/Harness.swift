import Foundation

// What every benchmark executable shares: the result line (issue #8's JSON fields), medians,
// times in milliseconds, peak memory, and the `--json` output.

/// One case: the subject's and the baseline's median times and their ratio, plus latency
/// figures for cases that time single requests.
public struct BenchResult: Encodable {
    /// The case's name, e.g. `fetch all into structs`.
    public var `case`: String
    /// The store or transport measured (`sqlite`, `postgres`, `http`).
    public var backend: String
    /// How many rows (or requests) one round handles.
    public var n: Int
    /// What is measured: Depot, or the library it is compared with.
    public var subject: String
    /// The subject's median time over the rounds, in milliseconds.
    public var medianMilliseconds: Double
    /// The raw baseline doing the same work (e.g. the SQLite C API).
    public var baseline: String
    /// The baseline's median time over the same rounds, in milliseconds.
    public var baselineMedianMilliseconds: Double
    /// `medianMilliseconds / baselineMedianMilliseconds`: below 1 the subject is faster.
    public var ratio: Double
    /// The process's peak resident memory when the result was made, in megabytes (Linux only).
    public var peakRSSMegabytes: Double?
    /// Per-request figures, for cases that time single requests.
    public var latency: Latency?
    /// HTTP requests one round of the subject sent, for cases that count them (`requests` in
    /// the JSON line, left out when nil).
    public var requests: Int?
    /// The case's A/A floor: the baseline timed against itself over the same rounds, as
    /// `median(again) / median(baseline) - 1` (`aa_floor` in the JSON line, left out when the case
    /// has none). A ratio closer to 1 than this is not a result (see ``isNoisy``).
    public var floor: Double?

    /// Whether the floor exceeds ±5%: two runs of identical work differed by more than that, so
    /// the ratio says nothing within that margin; printed as noise rather than as a result.
    public var isNoisy: Bool { floor.map { abs($0) > BenchHarness.noiseLimit } ?? false }

    /// Whether the ratio is no further from 1 than the floor: no difference shown at all.
    public var isWithinFloor: Bool { floor.map { abs(ratio - 1) <= abs($0) } ?? false }

    /// What follows the ratio where a result is printed: the A/A floor, and past ±5% that the ratio
    /// is noise, not a result, or that it is within the floor (empty when the case has no floor).
    public var floorNote: String {
        guard let floor else { return "" }
        let text = String(format: "%+.1f%%", floor * 100)
        if isNoisy { return "  A/A \(text): noise, not a result" }
        return isWithinFloor ? "  A/A \(text): within the floor, no difference shown" : "  A/A \(text)"
    }

    /// Per-request latency and throughput, for the subject and the baseline.
    public struct Latency: Encodable {
        /// The subject's median request latency, in milliseconds.
        public var p50Milliseconds: Double
        /// The subject's 99th-percentile request latency, in milliseconds.
        public var p99Milliseconds: Double
        /// The subject's throughput.
        public var requestsPerSecond: Double
        /// The baseline's median request latency, in milliseconds.
        public var baselineP50Milliseconds: Double
        /// The baseline's 99th-percentile request latency, in milliseconds.
        public var baselineP99Milliseconds: Double
        /// The baseline's throughput.
        public var baselineRequestsPerSecond: Double

        /// The figures of one case, subject first.
        public init(
            p50Milliseconds: Double, p99Milliseconds: Double, requestsPerSecond: Double,
            baselineP50Milliseconds: Double, baselineP99Milliseconds: Double, baselineRequestsPerSecond: Double
        ) {
            self.p50Milliseconds = p50Milliseconds
            self.p99Milliseconds = p99Milliseconds
            self.requestsPerSecond = requestsPerSecond
            self.baselineP50Milliseconds = baselineP50Milliseconds
            self.baselineP99Milliseconds = baselineP99Milliseconds
            self.baselineRequestsPerSecond = baselineRequestsPerSecond
        }

        enum CodingKeys: String, CodingKey {
            case p50Milliseconds = "p50_ms"
            case p99Milliseconds = "p99_ms"
            case requestsPerSecond = "requests_per_second"
            case baselineP50Milliseconds = "baseline_p50_ms"
            case baselineP99Milliseconds = "baseline_p99_ms"
            case baselineRequestsPerSecond = "baseline_requests_per_second"
        }
    }

    /// A result; the ratio is `subject / baseline` and peak memory is read now.
    public init(
        case name: String, backend: String, n: Int, subject: String, medianMilliseconds: Double, baseline: String,
        baselineMedianMilliseconds: Double, latency: Latency? = nil, requests: Int? = nil
    ) {
        self.case = name
        self.backend = backend
        self.n = n
        self.subject = subject
        self.medianMilliseconds = medianMilliseconds
        self.baseline = baseline
        self.baselineMedianMilliseconds = baselineMedianMilliseconds
        self.ratio = medianMilliseconds / baselineMedianMilliseconds
        self.peakRSSMegabytes = BenchHarness.peakRSSMegabytes()
        self.latency = latency
        self.requests = requests
    }

    enum CodingKeys: String, CodingKey {
        case `case`, backend, n, subject, baseline, ratio, requests
        case floor = "aa_floor"
        case medianMilliseconds = "median_ms"
        case baselineMedianMilliseconds = "baseline_median_ms"
        case peakRSSMegabytes = "peak_rss_mb"
    }

    /// One flat JSON object: the latency fields sit beside the others.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.case, forKey: .case)
        try container.encode(backend, forKey: .backend)
        try container.encode(n, forKey: .n)
        try container.encode(subject, forKey: .subject)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(medianMilliseconds, forKey: .medianMilliseconds)
        try container.encode(baselineMedianMilliseconds, forKey: .baselineMedianMilliseconds)
        try container.encode(peakRSSMegabytes, forKey: .peakRSSMegabytes)
        try container.encodeIfPresent(requests, forKey: .requests)
        try container.encodeIfPresent(floor, forKey: .floor)
        try latency?.encode(to: encoder)
    }
}

/// A benchmark that cannot run, and why.
public struct BenchError: Error, CustomStringConvertible {
    /// What stopped the benchmark, for a person.
    public var description: String
    /// An error saying `description`.
    public init(description: String) { self.description = description }
}

/// Command-line flags, medians and units every benchmark executable shares.
public enum BenchHarness {
    /// The value after `name` on the command line (`--only NAME`), or nil when `name` is absent;
    /// a flag given without its value stops the program, saying so.
    public static func option(_ name: String, in arguments: [String] = CommandLine.arguments) -> String? {
        guard let index = arguments.firstIndex(of: name) else { return nil }
        guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
            usageError("\(name) needs a value")
        }
        return arguments[index + 1]
    }

    /// ``option(_:in:)`` as a whole number; anything else stops the program, naming the flag and value.
    public static func intOption(_ name: String, in arguments: [String] = CommandLine.arguments) -> Int? {
        guard let text = option(name, in: arguments) else { return nil }
        guard let value = Int(text) else { usageError("\(name) needs a whole number, got '\(text)'") }
        return value
    }

    /// Stops the program with `message` on standard error and exit status 2.
    public static func usageError(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(CommandLine.arguments.first ?? "bench"): \(message)\n".utf8))
        exit(2)
    }

    /// The middle value (upper middle for an even count).
    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// `duration` in milliseconds, fractions kept.
    public static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// Milliseconds `work` takes (setup and cleanup belong outside it).
    nonisolated(nonsending) public static func time(_ work: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        let started = clock.now
        try await work()
        return milliseconds(clock.now - started)
    }

    /// Runs every side once per round — one warm-up round, then `rounds` timed rounds — in an
    /// order that rotates each round, reversed every other cycle of rotations, so that no side
    /// always runs first or right after the same other side (with three sides, six rounds run all
    /// six orders). Returns each side's runs, warm-up dropped, in the order of `sides`.
    nonisolated(nonsending) public static func interleave<Run>(
        rounds: Int, _ sides: [() async throws -> Run]
    ) async throws -> [[Run]] {
        var runs = Array(repeating: [Run](), count: sides.count)
        for round in 0...rounds {
            let reversed = (round / max(sides.count, 1)) % 2 == 1
            for step in sides.indices {
                let position = reversed ? sides.count - 1 - step : step
                let side = (position + round) % sides.count
                let run = try await sides[side]()
                if round > 0 { runs[side].append(run) }
            }
        }
        return runs
    }

    /// Above this A/A floor (±5%) a case's ratio is reported as noise, not as a result.
    public static let noiseLimit = 0.05

    /// The rounds a compared case runs by default: enough for a median to sit still (≥ 7).
    public static let defaultRounds = 7

    /// Times `subject` against `baseline`, and `baseline` against itself: one warm-up round and
    /// `rounds` timed rounds of the three (``interleave(rounds:_:)``, order rotating). Returns the
    /// subject's and the baseline's medians and the A/A floor (``BenchResult/floor``) — the second
    /// baseline side differs from the first only in when it runs.
    nonisolated(nonsending) public static func compareWithFloor(
        rounds: Int = defaultRounds, subject: @escaping () async throws -> Double,
        baseline: @escaping () async throws -> Double
    ) async throws -> (subject: Double, baseline: Double, floor: Double?) {
        let runs = try await interleave(rounds: rounds, [subject, baseline, baseline])
        let base = median(runs[1])
        return (median(runs[0]), base, floor(again: median(runs[2]), baseline: base))
    }

    /// The A/A floor of a baseline whose median is `baseline` and whose second run's is `again`;
    /// `nil` when the baseline took no time (nothing to compare).
    public static func floor(again: Double, baseline: Double) -> Double? {
        baseline > 0 ? again / baseline - 1 : nil
    }

    /// The process's peak resident set so far (`VmHWM`), in megabytes; nil off Linux.
    public static func peakRSSMegabytes() -> Double? { statusMegabytes("VmHWM:") }

    /// A kilobyte field of `/proc/self/status`, in megabytes; nil off Linux.
    private static func statusMegabytes(_ key: String) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(key) {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
            return kilobytes.map { $0 / 1024 }
        }
        return nil
    }

    /// Starts the peak resident set (`VmHWM`) again from the current one (Linux: `clear_refs`),
    /// so a phase's peak can be read on its own. Returns whether it could.
    @discardableResult
    public static func resetPeakRSS() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// The process's resident set now (`VmRSS`), in megabytes; nil off Linux.
    public static func currentRSSMegabytes() -> Double? { statusMegabytes("VmRSS:") }

    /// `--json`: one JSON object per line, keys sorted.
    public static func writeJSONLines(_ results: [BenchResult]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for result in results {
            FileHandle.standardOutput.write(try encoder.encode(result) + Data("\n".utf8))
        }
    }
}

extension BenchHarness {
    /// The fields of every line of the bundled `airports.csv` (RFC 4180: quoted fields, `""` for a
    /// quote inside one; the file has no line breaks inside fields), header left out: 11 per line.
    ///
    /// - Throws: `BenchError` naming the line whose field count is not 11.
    public static func bundledAirportFields() throws -> [[String]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let csv = root.appendingPathComponent("Sources/AirportsExample/Resources/airports.csv")
        let text = try String(contentsOf: csv, encoding: .utf8)
        var lines: [[String]] = []
        for (number, line) in text.split(separator: "\n").dropFirst().enumerated() {
            var fields: [String] = []
            var current = ""
            var quoted = false
            var characters = line.makeIterator()
            var pending = characters.next()
            while let character = pending {
                pending = characters.next()
                if character == "\"" {
                    if quoted, pending == "\"" {
                        current.append("\"")
                        pending = characters.next()
                    } else {
                        quoted.toggle()
                    }
                } else if character == ",", !quoted {
                    fields.append(current)
                    current = ""
                } else {
                    current.append(character)
                }
            }
            fields.append(current)
            guard fields.count == 11 else {
                throw BenchError(description: "airports.csv line \(number + 2): \(fields.count) fields, expected 11")
            }
            lines.append(fields)
        }
        return lines
    }
}
