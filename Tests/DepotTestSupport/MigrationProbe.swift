import Depot
import Foundation
import Testing

/// The table `depot-migration-probe` migrates, as version 1 declares it: what a store killed inside
/// step 2 must still hold.
public struct ProbeItem: Entity, Equatable {
    /// The item's number, 1 to 1,000: the primary key (column `id`).
    public var id: Int
    /// The value step 1 writes: equal to `id`.
    public var value: Int
    /// Table `probe_items`, keyed by `id`, with the columns step 1 creates.
    public static let schema = Schema<ProbeItem>("probe_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
    }
}

/// The same table as version 2 declares it: what a store holds once step 2 has finished.
public struct DoubledProbeItem: Entity, Equatable {
    /// The item's number, 1 to 1,000: the primary key (column `id`).
    public var id: Int
    /// The value step 1 writes: equal to `id`.
    public var value: Int
    /// Twice `value` once step 2 has filled the row; `nil` before (column `doubled`).
    public var doubled: Int?
    /// Table `probe_items`, keyed by `id`, with the `doubled` column step 2 adds.
    public static let schema = Schema<DoubledProbeItem>("probe_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
        Column(\.doubled, "doubled")
    }
}

/// Runs `depot-migration-probe` (built next to the test bundle) against a store, and kills it in
/// the middle of a migration step.
public enum MigrationProbe {
    /// The probe executable.
    ///
    /// - Returns: The `depot-migration-probe` built next to the test bundle.
    /// - Throws: A test failure asking to build it first, when it is not there.
    public static func binary() throws -> URL { try testExecutable("depot-migration-probe") }

    /// Runs the probe to completion; returns its exit status and output.
    ///
    /// - Parameter arguments: Its command line: `--store PATH` or `--postgres URL`, optionally `--to N`.
    /// - Returns: Its exit status, and its standard output and error together.
    /// - Throws: When the probe is not built or cannot be started.
    public static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runTestExecutable("depot-migration-probe", arguments)
    }

    /// Runs the probe with `--pause`, waits until it is inside step 2 (its first half written),
    /// and kills it with SIGKILL. Returns what it printed.
    ///
    /// - Parameter arguments: Its command line, without `--pause`.
    /// - Returns: What it printed; it contains `in step 2` when the kill came inside that step.
    /// - Throws: When the probe is not built or cannot be started.
    public static func killInsideStep(_ arguments: [String]) async throws -> String {
        try await runTestExecutable("depot-migration-probe", arguments + ["--pause"], killAfter: "in step 2").output
    }

    /// Starts `count` probes at once, each opening the store (at version 1) with `--additive`:
    /// version 2's entity declared under `.applyAdditiveChanges`. Then checks that every process
    /// opened it, that the added column was recorded once, and that `store` matches version 2.
    ///
    /// - Parameters:
    ///   - store: A store on the same database, already at version 1.
    ///   - arguments: The probe's command line selecting the database (`--store PATH` or `--postgres URL`).
    ///   - count: How many processes open it at once.
    /// - Throws: When a probe cannot be started or the store cannot be read.
    public static func expectConcurrentAdditiveOpens(
        _ store: any MigratableStore, _ arguments: [String], count: Int = 3
    ) async throws {
        let runs = try await withThrowingTaskGroup(of: (status: Int32, output: String).self) { group in
            for _ in 0..<count { group.addTask { try await run(arguments + ["--additive"]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for run in runs { #expect(run.status == 0, "every process opens the database: \(run.output)") }
        let applied = runs.filter { $0.output.contains("applied [\"\(Migration.automaticPrefix)") }
        #expect(applied.count == 1, "one process adds the column: \(runs.map(\.output))")
        let ledger = try await store.appliedMigrations()
        #expect(ledger.count == 2 && ledger.last?.name.hasPrefix(Migration.automaticPrefix) == true, "\(ledger)")
        try await store.checkSchema(of: [DoubledProbeItem.self])
        #expect(try await store.repository(DoubledProbeItem.self).count() == 1000)
    }

    /// Checks a store the probe was killed in: still at version 1 — the ledger, the table's
    /// columns and its rows as step 1 left them — then lets a fresh run finish step 2.
    ///
    /// - Parameters:
    ///   - store: A new store on the database the probe was killed in.
    ///   - arguments: The probe's command line for the run that finishes the migration.
    /// - Throws: When the schema check fails or the store or the probe cannot run.
    public static func expectKilledAtVersionOne(
        _ store: any MigratableStore, rerun arguments: [String]
    ) async throws {
        #expect(try await store.appliedMigrations().map(\.name) == ["1 items"])
        try await store.checkSchema(of: [ProbeItem.self])  // no `doubled` column
        let items = try await store.repository(ProbeItem.self).fetchAll()
        #expect(items == (1...1000).map { ProbeItem(id: $0, value: $0) })
        let finished = try await run(arguments)
        #expect(finished.status == 0, "\(finished.output)")
        #expect(finished.output.contains("at version 2"))
    }
}

/// An executable target of this package built next to the test bundle (the probes the tests run
/// as child processes).
///
/// - Parameter name: The executable's name.
/// - Returns: Its URL.
/// - Throws: A test failure asking to build it first, when it is not there.
public func testExecutable(_ name: String) throws -> URL {
    let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent(name) }
    return try #require(
        candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
        "build the \(name) target first (swift build --build-tests)")
}

extension MigrationProbe {
    /// Starts `count` probes as app instances of one store at once (`--instance K --of count`):
    /// each migrates, observes, writes 100 rows and waits until it has seen the others'. Checks
    /// that all ended well, that the two steps were applied once between them, and that each saw
    /// every other instance's rows through its observer.
    ///
    /// - Parameter arguments: The store's part of the command line (`--postgres URL …`).
    public static func expectInstancesSeeEachOther(_ arguments: [String], count: Int = 3) async throws {
        let runs = try await withThrowingTaskGroup(of: (status: Int32, output: String).self) { group in
            for instance in 1...count {
                group.addTask {
                    try await runTestExecutable(
                        "depot-migration-probe", arguments + ["--instance", "\(instance)", "--of", "\(count)"])
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var applied = 0
        for run in runs {
            #expect(run.status == 0, "\(run.output)")
            let lines = run.output.split(separator: "\n")
            applied += lines.compactMap { $0.hasPrefix("applied ") ? Int($0.dropFirst(8)) : nil }.reduce(0, +)
            #expect(lines.contains("saw \((count - 1) * 100) rows of the other instances"), "\(run.output)")
        }
        #expect(applied == 2, "the two steps ran once between the instances")
    }
}

/// Runs an executable target of this package (see ``testExecutable(_:)``) and returns its exit
/// status and what it printed; with `marker`, kills it with SIGKILL `delay` seconds after it has
/// printed `marker` (or once it ends without printing it).
///
/// - Parameters:
///   - name: The executable's name.
///   - arguments: Its command line.
///   - marker: What it prints when it is time to kill it; `nil` lets it run to its end.
///   - delay: Seconds between `marker` and the kill.
///   - mergingErrors: Whether its standard error is read with its output (otherwise discarded).
/// - Returns: Its exit status (SIGKILL's when killed) and what it printed.
/// - Throws: When it is not built or cannot be started.
public func runTestExecutable(
    _ name: String, _ arguments: [String], killAfter marker: String? = nil, delay: Double = 0,
    mergingErrors: Bool = true
) async throws -> (status: Int32, output: String) {
    let binary = try testExecutable(name)
    return try await offPool {
        let process = try ChildProcess.run(binary, arguments, errors: mergingErrors ? .output : .discard)
        guard let handle = process.output else { throw POSIXError(.EPIPE) }
        var printed = Data()
        if let marker {
            while !String(decoding: printed, as: UTF8.self).contains(marker) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }  // it ended without printing the marker
                printed.append(chunk)
            }
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            kill(process.processIdentifier, SIGKILL)
        }
        printed.append(handle.readDataToEndOfFile())
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }
}
