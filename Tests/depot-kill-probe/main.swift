// depot-kill-probe: the process the kill-loop tests kill with SIGKILL at a random moment.
//
//   depot-kill-probe run SCENARIO (--store PATH | --postgres URL)
//   depot-kill-probe check SCENARIO (--store PATH | --postgres URL)
//
// `run` opens the store, prints "ready", then writes until it is killed, printing "committed G"
// after each write of generation G returns (a migration scenario prints "started", migrates to
// version 2 and prints "done MS"). `check` reopens the store after a kill: SQLite's
// `PRAGMA integrity_check` and `foreign_key_check` (a SQLite file), then the scenario's invariant
// (Scenarios.swift; Depot enforces relations itself, so orphans are looked for there); prints
// "checked G", makes one more write to show the store takes writes, checks again and prints
// "accepted G". A broken invariant prints "violation: …" and exits 1.
import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import GRDB

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    say(message)
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}
let usage = "usage: depot-kill-probe run|check SCENARIO (--store PATH | --postgres URL)"
guard arguments.count >= 2, let scenario = Scenario(rawValue: arguments[1]) else {
    fail(usage + "; scenarios: " + Scenario.allCases.map(\.rawValue).joined(separator: ", "), status: 64)
}

/// SQLite's own checks of the file a killed process left: the b-trees, then every reference.
func checkSQLiteFile(_ path: String) throws {
    guard FileManager.default.fileExists(atPath: path) else { return }
    let queue = try DatabaseQueue(path: path)
    try queue.read { db in
        let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
        try require(integrity == ["ok"], "PRAGMA integrity_check: \(integrity.joined(separator: "; "))")
        let dangling = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
        try require(dangling.isEmpty, "PRAGMA foreign_key_check: \(dangling.count) references name no row")
    }
    try queue.close()
}

func withStore(_ body: (any MigratableStore) async throws -> Void) async throws {
    if let url = option("--postgres") {
        let store = try PostgresStore(url: url)
        do {
            try await body(store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    } else if let path = option("--store") {
        try await body(try SQLiteStore(path: path))
    } else {
        fail(usage, status: 64)
    }
}

func run(_ store: some MigratableStore) async throws {
    if scenario.isMigration {
        try await store.migrate(scenario.migrations, to: 1)
        say("ready")
        say("started")
        let started = ContinuousClock.now
        try await scenario.write(2, to: store)
        let took = ContinuousClock.now - started
        say("done \(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000)")
        return
    }
    try await store.migrate(scenario.migrations)
    var generation = try await scenario.check(store)
    say("ready")
    while true {
        generation += 1
        try await scenario.write(generation, to: store)
        say("committed \(generation)")
    }
}

func check(_ store: some MigratableStore) async throws {
    let generation = try await scenario.check(store)
    say("checked \(generation)")
    if !scenario.isMigration { try await store.migrate(scenario.migrations) }
    try await scenario.write(generation + 1, to: store)
    let after = try await scenario.check(store)
    let expected = scenario.isMigration ? 2 : generation + 1
    try require(after == expected, "after one more write the store is at \(after), not \(expected)")
    say("accepted \(after)")
}

do {
    switch arguments[0] {
    case "run":
        try await withStore { try await run($0) }
    case "check":
        if let path = option("--store") { try checkSQLiteFile(path) }
        try await withStore { try await check($0) }
        if let path = option("--store") { try checkSQLiteFile(path) }
    default:
        fail(usage, status: 64)
    }
} catch let violation as Violation {
    fail("violation: \(violation)")
} catch {
    fail("error: \(error)")
}
