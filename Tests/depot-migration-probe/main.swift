// depot-migration-probe: a process for the tests that kill a migration midway.
//
//   depot-migration-probe (--store PATH | --postgres URL) [--to N] [--pause] [--additive]
//
// Applies two steps to the store: "1 items" creates `probe_items` with 1,000 rows; "2 doubled"
// adds a column and fills it in two halves. With --pause, step 2 prints "in step 2" after its
// first half and sleeps, so a test can kill the process in the middle of the step. With
// --additive, the process opens the store with step 1 listed and version 2's entity declared,
// under `.applyAdditiveChanges`: several such processes started at once must all open it.
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

do {
    let target = option("--to").flatMap(Int.init)
    let outcome: MigrationOutcome
    func run(_ store: any MigratableStore) async throws -> MigrationOutcome {
        guard additive else { return try await store.migrate(migrations, to: target) }
        let opened = try await store.open(
            Migrations(Array(migrations.steps.prefix(1))), entities: [DoubledProbeItem.self],
            onSchemaChange: .applyAdditiveChanges)
        print("applied \(opened.steps)")
        return opened
    }
    if let url = option("--postgres") {
        let store = try PostgresStore(url: url)
        do { outcome = try await run(store) } catch {
            await store.close()
            throw error
        }
        await store.close()
    } else if let path = option("--store") {
        outcome = try await run(try SQLiteStore(path: path))
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
