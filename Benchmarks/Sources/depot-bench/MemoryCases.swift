import BenchHarness
import Depot
import DepotSQLite
import Foundation

// Memory (issue #8): the peak resident memory of a fresh process that opens the seeded file and
// fetches every row into structs — Depot against the raw C fetch. Each side runs in a child
// process of its own (`depot-bench --memory-probe depot|raw PATH N`), so neither inherits the
// other's heap; medians of interleaved rounds.

enum MemoryCases {
    /// In a probe process: fetch, then print the peak resident memory in MB.
    static func probe(_ arguments: [String]) async throws {
        guard let index = arguments.firstIndex(of: "--memory-probe"), arguments.count > index + 3,
            let expected = Int(arguments[index + 3])
        else { throw BenchError(description: "usage: --memory-probe depot|raw PATH N") }
        let path = arguments[index + 2]
        let count: Int
        if arguments[index + 1] == "depot" {
            count = try await SQLiteStore(path: path).repository(BenchAirport.self).fetchAll().count
        } else {
            count = RawDatabase(path: path).fetch(RawDatabase.selectAll + " ORDER BY \"icao\"").count
        }
        guard count == expected else { throw BenchError(description: "probe fetched \(count), expected \(expected)") }
        print(String(format: "%.2f", BenchHarness.peakRSSMegabytes() ?? 0))
    }

    /// `--profile depot|raw PATH N ROUNDS [CASE]`: seeds PATH with N rows when it does not exist,
    /// then runs one side of a read case (`fetch`, the default, or `count`) ROUNDS times on one
    /// open store — for `perf record`, without the seeding and the other side in the samples.
    static func profile(_ arguments: [String]) async throws {
        guard let index = arguments.firstIndex(of: "--profile"), arguments.count > index + 4,
            let n = Int(arguments[index + 3]), let rounds = Int(arguments[index + 4])
        else {
            throw BenchError(description: "usage: --profile depot|raw PATH N ROUNDS [fetch|count|patch|upsert|include]")
        }
        let path = arguments[index + 2]
        let what = arguments.count > index + 5 ? arguments[index + 5] : "fetch"
        var total = 0
        if what == "include" {
            if !FileManager.default.fileExists(atPath: path) {
                try await RelationCases.seed(path, parents: n / 10, children: n)
            }
            if arguments[index + 1] == "depot" {
                let repository = try SQLiteStore(path: path).repository(BenchParent.self)
                for _ in 0..<rounds { total += try await repository.fetch(including: [BenchParent.children]).count }
            } else {
                let database = RawDatabase(path: path)
                for _ in 0..<rounds { total += RelationCases.rawInclude(database).count }
            }
            print(total)
            return
        }
        if !FileManager.default.fileExists(atPath: path) {
            RawDatabase(path: path).write(replicate(try loadAirports(), count: n), upsert: false)
        }
        let rows = what == "patch" || what == "upsert" ? replicate(try loadAirports(), count: n) : []
        if arguments[index + 1] == "depot" {
            let repository = try SQLiteStore(path: path).repository(BenchAirport.self)
            let patches = rows.map {
                Patch<BenchAirport>(key: $0.icao).set(\.name, $0.name + "!").set(\.elevation, $0.elevation + 2)
            }
            for _ in 0..<rounds {
                switch what {
                case "count": total += try await repository.count(where: \.country == "US")
                case "patch": try await repository.apply(patches)
                case "upsert": try await repository.upsert(rows)
                default: total += try await repository.fetchAll().count
                }
            }
        } else {
            let database = RawDatabase(path: path)
            for _ in 0..<rounds {
                switch what {
                case "count": total += database.count("SELECT COUNT(*) FROM \"airports\" WHERE \"country\" = ?", ["US"])
                case "patch": database.patch(rows)
                case "upsert": database.write(rows, upsert: true)
                default: total += database.fetch(RawDatabase.selectAll + " ORDER BY \"icao\"").count
                }
            }
        }
        print(total)
    }

    @MainActor
    static func run(n: Int, rows: [BenchAirport]) async throws -> [BenchResult] {
        let name = "fetch all: peak memory (MB)"
        if !selected(name) { return [] }
        guard BenchHarness.peakRSSMegabytes() != nil else { return [] }  // Linux only
        let path = scratchPath()
        defer { removeDatabase(path) }
        try await SQLiteStore(path: path).repository(BenchAirport.self).insert(rows)
        func measure(_ side: String) throws -> Double {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).absoluteURL
            process.arguments = ["--memory-probe", side, path, String(rows.count)]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationStatus == 0, let megabytes = Double(text) else {
                throw BenchError(description: "\(name): the \(side) probe failed: \(text)")
            }
            return megabytes
        }
        let medians = try await BenchHarness.compareWithFloor(
            subject: { try measure("depot") }, baseline: { try measure("raw") })
        var result = BenchResult(
            case: name, backend: "sqlite", n: n, subject: "depot", medianMilliseconds: medians.subject,
            baseline: "raw-c", baselineMedianMilliseconds: medians.baseline)
        result.floor = medians.floor  // of peak megabytes here, not of time
        result.peakRSSMegabytes = medians.subject
        return [result]
    }
}
