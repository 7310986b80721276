import BenchHarness
import DepotHTTP
import Foundation
import Hummingbird
import Logging
import NIOCore

// depot-http-bench: APIClient on each real transport against the same transport's `send`, called
// directly with the request the client would build. Same process, interleaved rounds, medians.
// The loopback server (Hummingbird) runs in a child process: this executable with `--serve`.
// swift run -c release --package-path Benchmarks --scratch-path .build-bench depot-http-bench [--json] [--n 2000]
//   [--rounds 5] [--only "client GET sequential"] [--aa] | --micro | --profile client|direct N

/// A 20-byte JSON body taken as raw bytes, so the client's own work is measured, not a decoder's.
struct Ping: Endpoint {
    typealias Response = Data
    var path: String { "/ping" }
}

// MARK: - Server

/// Serves `GET /ping` on 127.0.0.1 with an ephemeral port, writes `port N` to standard output,
/// and exits when told to (SIGTERM) or when its parent goes away (standard input closes).
func serve() async throws {
    Thread.detachNewThread {
        _ = FileHandle.standardInput.readDataToEndOfFile()
        exit(0)
    }
    let router = Router()
    router.get("/ping") { _, _ in #"{"id":1,"name":"ok"}"# }
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            FileHandle.standardOutput.write(Data("port \(channel.localAddress?.port ?? 0)\n".utf8))
        },
        logger: Logger(label: "depot-http-bench.server") { _ in SwiftLogNoOpLogHandler() })
    try await app.runService()
}

/// The server child process, stopped by its PID.
struct ServerProcess {
    let process: Process
    let port: Int

    static func start() throws -> ServerProcess {
        let process = Process()
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--serve"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = Pipe()
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            guard let chunk = try output.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty else {
                throw BenchError(description: "the server exited before reporting its port")
            }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("port "), let port = Int(text.dropFirst(5)), port > 0 else {
            throw BenchError(description: "unexpected server output: \(text)")
        }
        return ServerProcess(process: process, port: port)
    }

    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

// MARK: - Harness

/// One timed run: the wall time for all requests and every request's latency, sorted.
struct Run {
    var milliseconds: Double
    var latencies: [Double]

    var p50: Double { latencies[latencies.count / 2] }
    var p99: Double { latencies[min(latencies.count - 1, latencies.count * 99 / 100)] }
}

/// Sends `n` requests through `operation` from `concurrency` tasks at once.
func measure(n: Int, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Void) async throws -> Run {
    let clock = ContinuousClock()
    let started = clock.now
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for worker in 0..<concurrency {
            let count = n / concurrency + (worker < n % concurrency ? 1 : 0)
            group.addTask {
                var latencies: [Double] = []
                latencies.reserveCapacity(count)
                for _ in 0..<count {
                    let sent = clock.now
                    try await operation()
                    latencies.append(BenchHarness.milliseconds(clock.now - sent))
                }
                return latencies
            }
        }
        var all: [Double] = []
        all.reserveCapacity(n)
        for try await part in group { all += part }
        return all
    }
    return Run(milliseconds: BenchHarness.milliseconds(clock.now - started), latencies: latencies.sorted())
}

/// Runs subject, baseline and the baseline again alternately (BenchHarness.interleave): one
/// warm-up round, then `rounds` timed rounds; every figure is the median over the timed rounds,
/// and the baseline against itself gives the case's A/A floor.
func compare(
    _ name: String, backend: String, n: Int, concurrency: Int, rounds: Int,
    subject: @escaping @Sendable () async throws -> Void, baseline: @escaping @Sendable () async throws -> Void
) async throws -> BenchResult {
    let baselineSide = { try await measure(n: n, concurrency: concurrency, baseline) }
    let runs = try await BenchHarness.interleave(
        rounds: rounds, [{ try await measure(n: n, concurrency: concurrency, subject) }, baselineSide, baselineSide])
    let (subjectRuns, baselineRuns) = (runs[0], runs[1])
    let subjectMedian = BenchHarness.median(subjectRuns.map(\.milliseconds))
    let baselineMedian = BenchHarness.median(baselineRuns.map(\.milliseconds))
    var result = BenchResult(
        case: name, backend: backend, n: n, subject: "APIClient.send", medianMilliseconds: subjectMedian,
        baseline: "Transport.send", baselineMedianMilliseconds: baselineMedian,
        latency: BenchResult.Latency(
            p50Milliseconds: BenchHarness.median(subjectRuns.map(\.p50)),
            p99Milliseconds: BenchHarness.median(subjectRuns.map(\.p99)),
            requestsPerSecond: Double(n) / subjectMedian * 1000,
            baselineP50Milliseconds: BenchHarness.median(baselineRuns.map(\.p50)),
            baselineP99Milliseconds: BenchHarness.median(baselineRuns.map(\.p99)),
            baselineRequestsPerSecond: Double(n) / baselineMedian * 1000))
    result.floor = BenchHarness.floor(again: BenchHarness.median(runs[2].map(\.milliseconds)), baseline: baselineMedian)
    return result
}

// MARK: - Cases

@main
struct DepotHTTPBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        if arguments.contains("--serve") {
            try await serve()
            return
        }
        if arguments.contains("--micro") {
            try await micro()
            return
        }
        let json = arguments.contains("--json")
        // --aa: the subject is the baseline too, so the ratios show this machine's noise floor.
        let aa = arguments.contains("--aa")
        let n = BenchHarness.intOption("--n") ?? 2000
        let rounds = BenchHarness.intOption("--rounds") ?? BenchHarness.defaultRounds
        // --only TEXT: the cases whose "transport case" name contains TEXT (e.g. "client sequential").
        let only = BenchHarness.option("--only")

        var transports: [(String, any Transport)] = []
        #if canImport(AsyncHTTPClient)
            transports.append(("async-http-client", AsyncHTTPClientTransport.shared))
        #endif
        transports.append(("urlsession", URLSessionTransport.shared))

        let server = try ServerProcess.start()
        defer { server.stop() }
        guard let baseURL = URL(string: "http://127.0.0.1:\(server.port)") else {
            throw BenchError(description: "no URL for port \(server.port)")
        }
        if !json {
            print(
                "depot-http-bench: GET /ping (20-byte JSON body, taken as Data), Hummingbird in a child process "
                    + "(pid \(server.process.processIdentifier)) on 127.0.0.1:\(server.port)")
            print("n = \(n) requests per run, \(rounds) interleaved rounds after a warm-up round, medians")
            print("subject: APIClient.send(Ping()); baseline: the same transport's send(request) directly\n")
        }

        // --profile client|direct N: only that side, N sequential requests on AsyncHTTPClient (for perf).
        if let side = BenchHarness.option("--profile"), let transport = transports.first?.1 {
            guard side == "client" || side == "direct" else {
                BenchHarness.usageError("--profile needs client or direct, got '\(side)'")
            }
            let client = APIClient(baseURL: baseURL, transport: transport)
            let request = try client.makeRequest(for: Ping())
            let count =
                arguments.firstIndex(of: side).flatMap { Int(arguments.dropFirst($0 + 1).first ?? "") } ?? 10_000
            let viaClient = side == "client"
            let run = try await measure(n: count, concurrency: 1) {
                if viaClient {
                    _ = try await client.send(Ping())
                } else {
                    _ = try await transport.send(request, maximumBodySize: 1 << 26)
                }
            }
            print(
                String(
                    format: "%@: %.0f req/s, p50 %.3f ms", side,
                    Double(count) / run.milliseconds * 1000, run.p50))
            return
        }

        var results: [BenchResult] = []
        for (backend, transport) in transports {
            // The same calls through a client with a typical chain: bearer token, activity, metrics
            // (the direct baseline sends the same Authorization header).
            var chained = APIClient.Configuration()
            chained.middleware = [
                ActivityTracker(), MetricsMiddleware { _ in },
                TokenAuthentication(TokenProvider(token: { "token" }, refresh: { _ in "token" })),
            ]
            for (concurrency, withMiddleware) in [(1, false), (16, false), (1, true)] {
                let client = APIClient(
                    baseURL: baseURL, transport: transport, configuration: withMiddleware ? chained : .init())
                var prepared = try client.makeRequest(for: Ping())
                if withMiddleware { prepared.headers["Authorization"] = "Bearer token" }
                let request = prepared
                let maximumBodySize = client.configuration.maximumResponseSize
                let name =
                    (concurrency == 1 ? "GET sequential" : "GET \(concurrency) concurrent")
                    + (withMiddleware ? ", 3 middleware" : "")
                if let only, !"\(backend) \(name)".contains(only) { continue }
                let result = try await compare(
                    name, backend: backend, n: n, concurrency: concurrency, rounds: rounds,
                    subject: {
                        if aa {
                            _ = try await transport.send(request, maximumBodySize: maximumBodySize)
                        } else {
                            _ = try await client.send(Ping())
                        }
                    },
                    baseline: {
                        let response = try await transport.send(request, maximumBodySize: maximumBodySize)
                        guard response.status == 200 else {
                            throw BenchError(description: "status \(response.status)")
                        }
                    })
                results.append(result)
            }
        }

        if json {
            try BenchHarness.writeJSONLines(results)
        } else {
            print(
                "transport          case                             APIClient: req/s   p50 ms  p99 ms"
                    + "   direct: req/s   p50 ms  p99 ms   ratio")
            for result in results {
                guard let latency = result.latency else { continue }
                print(
                    result.backend.padding(toLength: 19, withPad: " ", startingAt: 0)
                        + result.case.padding(toLength: 33, withPad: " ", startingAt: 0)
                        + String(
                            format: "%17.0f %8.3f %7.3f %15.0f %8.3f %7.3f   %.2f×", latency.requestsPerSecond,
                            latency.p50Milliseconds, latency.p99Milliseconds, latency.baselineRequestsPerSecond,
                            latency.baselineP50Milliseconds, latency.baselineP99Milliseconds, result.ratio)
                        + result.floorNote)
            }
            if let peak = BenchHarness.peakRSSMegabytes() {
                print(String(format: "\npeak RSS (client process): %.1f MB", peak))
            }
        }
    }
}

// MARK: - Client cost without a network

/// `--micro`: the client's own cost per call, in µs, with a transport that answers at once
/// (StubTransport), split into its parts. For finding where APIClient's overhead goes.
func micro() async throws {
    let n = 200_000
    let stub = StubTransport()
    stub.stub(.get, "/ping", .text(#"{"id":1,"name":"ok"}"#))
    guard let base = URL(string: "http://127.0.0.1:1") else { return }
    let client = APIClient(baseURL: base, transport: stub)
    let request = try client.makeRequest(for: Ping())
    func time(_ label: String, _ body: () async throws -> Void) async rethrows {
        for _ in 0..<1000 { try await body() }
        let milliseconds = try await BenchHarness.time { for _ in 0..<n { try await body() } }
        print(
            label.padding(toLength: 40, withPad: " ", startingAt: 0)
                + String(format: "%8.2f µs", milliseconds * 1000 / Double(n)))
    }
    stub.clearRequests()
    try await time("stub.send(request)") { _ = try await stub.send(request, maximumBodySize: 1 << 20) }
    stub.clearRequests()
    try await time("client.makeRequest(Ping())") { _ = try client.makeRequest(for: Ping()) }
    await time("URL(string:)") { _ = URL(string: "http://127.0.0.1:1/ping") }
    await time("Task { }.value") { _ = await Task { 1 }.value }
    try await time("client.send(Ping()) on StubTransport") { _ = try await client.send(Ping()) }
    stub.clearRequests()
    let instant = APIClient(baseURL: base, transport: InstantTransport())
    try await time("client.send(Ping()), answered in place") { _ = try await instant.send(Ping()) }
}

/// Answers every request at once, in the caller's task (StubTransport goes through the default
/// interruption support, a task per call): the client's own cost without any transport's.
struct InstantTransport: Transport {
    let response = TransportResponse(status: 200, body: Data(#"{"id":1,"name":"ok"}"#.utf8))

    func send(_ request: TransportRequest, maximumBodySize: Int) async throws -> TransportResponse { response }

    func send(_ request: TransportRequest, maximumBodySize: Int, interruption: TransportInterruption) async throws
        -> TransportResponse
    {
        response
    }
}
