// depot-migration-probe: a process for the tests that kill a migration midway.
//
//   depot-migration-probe (--store PATH | --postgres URL) [--to N] [--pause] [--additive]
//
// Applies two steps to the store: "1 items" creates `probe_items` with 1,000 rows; "2 doubled"
// adds a column and fills it in two halves. With --pause, step 2 prints "in step 2" after its
// first half and sleeps, so a test can kill the process in the middle of the step. With
// --additive, the process opens the store with step 1 listed and version 2's entity declared,
// under `.applyAdditiveChanges`: several such processes started at once must all open it.
//
//   depot-migration-probe (--store PATH | --postgres URL [--listener URL]) --instance K --of N
//
// One of N app instances started at once: it migrates (printing how many steps it applied), then
// observes the rows above 1,000, adds a marker row and waits until it has seen every instance's
// marker; then it adds 100 rows of its own and waits until its observer has seen all N × 100,
// printing how many were the other instances'. It gives up after 300 s (exit 2).
import Depot
import DepotPostgres
import DepotSQLite
import Foundation

struct ProbeItem: Entity {
    var id: Int
    var value: Int
    static let schema = Schema<ProbeItem>("probe_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
    }
}

struct DoubledProbeItem: Entity {
    var id: Int
    var value: Int
    var doubled: Int?
    static let schema = Schema<DoubledProbeItem>("probe_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
        Column(\.doubled, "doubled")
    }
}

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}
let pause = arguments.contains("--pause")
let additive = arguments.contains("--additive")
let instance = option("--instance").flatMap(Int.init)
let instances = option("--of").flatMap(Int.init) ?? 1

let migrations = Migrations([
    Migration(
        "1 items",
        [
            .createTable(ProbeItem.self),
            .data("1,000 items") { tx in
                try await tx.repository(ProbeItem.self).insert((1...1000).map { ProbeItem(id: $0, value: $0) })
            },
        ]),
    Migration(
        "2 doubled",
        [
            .addColumn("doubled", .integer, nullable: true, to: "probe_items"),
            .data("fill doubled") { tx in
                let items = tx.repository(DoubledProbeItem.self)
                let all = try await items.fetchAll()
                try await items.upsert(
                    all.prefix(500).map { DoubledProbeItem(id: $0.id, value: $0.value, doubled: 2 * $0.value) })
                if pause {
                    FileHandle.standardOutput.write(Data("in step 2\n".utf8))
                    try await Task.sleep(for: .seconds(120))
                }
                try await items.upsert(
                    all.dropFirst(500).map { DoubledProbeItem(id: $0.id, value: $0.value, doubled: 2 * $0.value) })
            },
        ]),
])

/// One app instance of `instances`: migrates, waits on its observer until every instance observes,
/// writes 100 rows and waits until its observer has seen every instance's.
func runInstance(_ store: any MigratableStore, _ instance: Int) async throws -> MigrationOutcome {
    let outcome = try await store.migrate(migrations)
    print("applied \(outcome.steps.count)")
    let items = store.repository(DoubledProbeItem.self)
    var observed = items.observe(where: \.id > 1000, orderBy: [.ascending(\.id)]).makeAsyncIterator()
    func waitUntil(_ done: ([DoubledProbeItem]) -> Bool) async throws -> [DoubledProbeItem] {
        while let rows = try await observed.next() {
            if done(rows) { return rows }
        }
        throw DepotError(.storage, "the observation ended")
    }
    _ = try await observed.next()
    try await items.insert(DoubledProbeItem(id: 1000 + instance, value: instance, doubled: nil))
    _ = try await waitUntil { rows in rows.filter { $0.id <= 1000 + instances }.count == instances }
    // Every instance observes now: the rows below reach the others through their observers.
    try await items.insert(
        (1...100).map { DoubledProbeItem(id: 2000 + instance * 100 + $0, value: instance, doubled: nil) })
    let rows = try await waitUntil { rows in rows.filter { $0.id > 2000 }.count == instances * 100 }
    print("saw \(rows.filter { $0.id > 2000 && $0.value != instance }.count) rows of the other instances")
    return outcome
}

if instance != nil {
    Task {
        try await Task.sleep(for: .seconds(300))
        FileHandle.standardError.write(Data("gave up after 300 s\n".utf8))
        exit(2)
    }
}

do {
    let target = option("--to").flatMap(Int.init)
    let outcome: MigrationOutcome
    func run(_ store: any MigratableStore) async throws -> MigrationOutcome {
        if let instance { return try await runInstance(store, instance) }
        guard additive else { return try await store.migrate(migrations, to: target) }
        let opened = try await store.open(
            Migrations(Array(migrations.steps.prefix(1))), entities: [DoubledProbeItem.self],
            onSchemaChange: .applyAdditiveChanges)
        print("applied \(opened.steps)")
        return opened
    }
    if let url = option("--postgres") {
        var configuration = try PostgresStore.Configuration(url: url)
        configuration.listenerURL = option("--listener")
        let store = PostgresStore(configuration: configuration)
        do { outcome = try await run(store) } catch {
            await store.close()
            throw error
        }
        await store.close()
    } else if let path = option("--store") {
        // A minute's busy wait: the tests start several probes on one file at once on a loaded machine.
        outcome = try await run(try SQLiteStore(path: path, busyTimeout: .seconds(60)))
    } else {
        FileHandle.standardError.write(
            Data("usage: depot-migration-probe (--store PATH | --postgres URL) [--to N] [--pause] [--additive]\n".utf8))
        exit(64)
    }
    print("at version \(outcome.to)")
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
