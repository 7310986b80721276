// The kill loop's scenarios: what each one writes, and the invariant every write keeps, so that a
// process killed at any moment leaves a store the checker can judge: every transaction is wholly
// there or wholly absent.
import Depot
import Foundation

/// A row the write scenarios rewrite: `generation` says which transaction wrote it last.
struct KillRow: Entity, Equatable {
    var id: Int
    var group: Int
    var generation: Int
    var value: Int
    /// Written once when the row is created and never again: a partial update must leave it.
    var untouched: Int
    static let schema = Schema<KillRow>("kp_rows", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.group, "grp")
        Column(\.generation, "generation")
        Column(\.value, "value")
        Column(\.untouched, "untouched")
    }
}

/// What a transaction wrote, in the same transaction: the invariant the checker compares with.
struct KillChecksum: Entity, Equatable {
    var id: String
    var generation: Int
    var rows: Int
    var total: Int
    static let schema = Schema<KillChecksum>("kp_checksums", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.generation, "generation")
        Column(\.rows, "rows")
        Column(\.total, "total")
    }

    /// The checksum of `rows`, all written by the transaction of `generation`.
    init(id: String, generation: Int, of rows: [KillRow]) {
        self.init(id: id, generation: generation, rows: rows.count, total: rows.reduce(0) { $0 + $1.value })
    }

    init(id: String, generation: Int, rows: Int, total: Int) {
        (self.id, self.generation, self.rows, self.total) = (id, generation, rows, total)
    }
}

/// A parent whose children a cascade removes and a graph save replaces.
struct KillParent: Entity, Equatable {
    var id: Int
    var generation: Int
    var childCount: Int
    static let schema = Schema<KillParent>("kp_parents", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.generation, "generation")
        Column(\.childCount, "child_count")
    }
    static let children = ToMany(KillChild.parent)
    static var relations: [any Relation<KillParent>] { [children] }
}

/// A child row: its `generation` is its parent's when the two were written together.
struct KillChild: Entity, Equatable {
    var id: Int
    var parentID: Int
    var generation: Int
    static let schema = Schema<KillChild>("kp_children", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.parentID, "parent_id")
        Column(\.generation, "generation")
    }
    static let parent = ToOne<KillChild, KillParent>(\.parentID, onDelete: .cascade)
    static var relations: [any Relation<KillChild>] { [parent] }
}

/// The migration scenarios' table as version 1 declares it.
struct KillItem: Entity, Equatable {
    var id: Int
    var value: Int
    var doubled: Int?
    static let schema = Schema<KillItem>("kp_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
        Column(\.doubled, "doubled")
    }
}

/// Version 2 of the add-column scenario: a column added and filled in the same step.
struct KillItemTripled: Entity, Equatable {
    var id: Int
    var value: Int
    var doubled: Int?
    var tripled: Int?
    static let schema = Schema<KillItemTripled>("kp_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
        Column(\.doubled, "doubled")
        Column(\.tripled, "tripled")
    }
}

/// Version 2 of the type-change scenario: `value` became a nullable double (SQLite rebuilds the
/// table for it).
struct KillItemReal: Entity, Equatable {
    var id: Int
    var value: Double?
    var doubled: Int?
    static let schema = Schema<KillItemReal>("kp_items", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.value, "value")
        Column(\.doubled, "doubled")
    }
}

/// A broken invariant: what the checker found.
struct Violation: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw Violation(message()) }
}

/// The value a write of generation `generation` gives row `id`.
func value(_ id: Int, _ generation: Int) -> Int { (id &* 31 &+ generation &* 17) % 1000 }

/// The scenarios, by the name the command line gives.
enum Scenario: String, CaseIterable {
    /// 2,000 rows upserted per transaction, with their checksum.
    case upserts
    /// `replace(where:with:)` of one group's rows (a varying count), with the group's checksum.
    case replace
    /// Patches of two fields on 2,000 rows (a third field never written), with their checksum.
    case partial
    /// A parent with 400 children removed by a cascade, another inserted with its children.
    case cascade
    /// A graph save: a parent and a new list of children (the old ones removed).
    case graph
    /// Migration 2 is a data step that fills a column in batches.
    case migrateData = "migrate-data"
    /// Migration 2 adds a column and fills it.
    case migrateAddColumn = "migrate-add-column"
    /// Migration 2 changes a column's type (SQLite: the table is rebuilt).
    case migrateAlter = "migrate-alter"

    var isMigration: Bool { rawValue.hasPrefix("migrate") }

    static let rowCount = 2000
    static let itemCount = 20_000

    // MARK: Schema

    var migrations: Migrations {
        switch self {
        case .upserts, .replace, .partial:
            return Migrations([
                Migration("1 rows", [.createTable(KillRow.self), .createTable(KillChecksum.self)])
            ])
        case .cascade, .graph:
            return Migrations([
                Migration("1 graph", [.createTable(KillParent.self), .createTable(KillChild.self)])
            ])
        case .migrateData, .migrateAddColumn, .migrateAlter:
            let first = Migration(
                "1 items",
                [
                    .createTable(KillItem.self),
                    .data("items") { tx in
                        let items = (1...Self.itemCount).map { KillItem(id: $0, value: 3 * $0, doubled: nil) }
                        try await tx.repository(KillItem.self).insert(items)
                    },
                ])
            return Migrations([first, secondMigration])
        }
    }

    private var secondMigration: Migration {
        switch self {
        case .migrateAddColumn:
            return Migration(
                "2 tripled",
                [
                    .addColumn("tripled", .integer, nullable: true, to: "kp_items"),
                    .data("fill tripled") { tx in
                        let items = tx.repository(KillItemTripled.self)
                        for try await batch in items.batches(of: 1000) {
                            try await items.upsert(
                                batch.map { item in
                                    var item = item
                                    item.tripled = 3 * item.value
                                    return item
                                })
                        }
                    },
                ])
        case .migrateAlter:
            return Migration("2 real values", [.alterColumn("value", to: .double, nullable: true, in: "kp_items")])
        default:
            return Migration(
                "2 doubled",
                [
                    .data("fill doubled") { tx in
                        let items = tx.repository(KillItem.self)
                        for try await batch in items.batches(of: 1000) {
                            try await items.upsert(
                                batch.map { item in
                                    var item = item
                                    item.doubled = 2 * item.value
                                    return item
                                })
                        }
                    }
                ])
        }
    }

    // MARK: Writes

    /// One write of generation `generation` (one more than the stored one), in one transaction
    /// or one atomic call.
    func write(_ generation: Int, to store: some MigratableStore) async throws {
        let n = Self.rowCount
        switch self {
        case .upserts:
            let rows = (1...n).map {
                KillRow(id: $0, group: 0, generation: generation, value: value($0, generation), untouched: 7 * $0)
            }
            let sum = KillChecksum(id: checksumID(group: 0), generation: generation, of: rows)
            try await store.write { tx in
                try await tx.repository(KillRow.self).upsert(rows)
                try await tx.repository(KillChecksum.self).upsert(sum)
            }
        case .replace:
            let group = generation % 4
            let count = 50 + (generation &* 37) % 400
            let rows = (1...count).map { index in
                let id = group * 100_000 + index
                return KillRow(
                    id: id, group: group, generation: generation, value: value(id, generation), untouched: 7 * id)
            }
            let sum = KillChecksum(id: checksumID(group: group), generation: generation, of: rows)
            try await store.write { tx in
                try await tx.repository(KillRow.self).replace(where: \.group == group, with: rows)
                try await tx.repository(KillChecksum.self).upsert(sum)
            }
        case .partial:
            if generation == 1 {  // the rows the patches rewrite, created once with `untouched`
                let created = (1...n).map {
                    KillRow(id: $0, group: 0, generation: 1, value: value($0, 1), untouched: 7 * $0)
                }
                let sum = KillChecksum(id: checksumID(group: 0), generation: 1, of: created)
                try await store.write { tx in
                    try await tx.repository(KillRow.self).insert(created)
                    try await tx.repository(KillChecksum.self).upsert(sum)
                }
                return
            }
            let patches = (1...n).map {
                Patch<KillRow>(key: $0).set(\.generation, generation).set(\.value, value($0, generation))
            }
            let total = (1...n).reduce(0) { $0 + value($1, generation) }
            try await store.write { tx in
                try await tx.repository(KillRow.self).apply(patches)
                try await tx.repository(KillChecksum.self).upsert(
                    KillChecksum(id: checksumID(group: 0), generation: generation, rows: n, total: total))
            }
        case .cascade:
            // Keep three parents: remove the oldest (its children go with it, by the cascade), then
            // add the next one with its children.
            let parents = try await store.repository(KillParent.self).fetch(orderBy: [.ascending(\.id)])
            if parents.count >= 3, let oldest = parents.first {
                _ = try await store.repository(KillParent.self).remove(oldest.id)
            }
            let id = generation
            let children = (1...400).map { KillChild(id: id * 1000 + $0, parentID: id, generation: generation) }
            try await store.write { tx in
                try await tx.repository(KillParent.self).insert(
                    KillParent(id: id, generation: generation, childCount: children.count))
                try await tx.repository(KillChild.self).insert(children)
            }
        case .graph:
            // Four parents, each saved again and again with a new list of children (ids overlap the
            // old list's, so some are updated, some added, the rest removed).
            let id = generation % 4 + 1
            let count = 50 + (generation &* 53) % 400
            let offset = (generation &* 29) % 100
            let children = (1...count).map {
                KillChild(id: id * 100_000 + offset + $0, parentID: id, generation: generation)
            }
            try await store.repository(KillParent.self).save(
                KillParent(id: id, generation: generation, childCount: count), with: children,
                in: KillParent.children)
        case .migrateData, .migrateAddColumn, .migrateAlter:
            _ = try await store.migrate(migrations)
        }
    }

    // MARK: Checks

    /// Checks the scenario's invariant on the store as it is; returns its generation (the number
    /// of the last write wholly there; for a migration scenario, the version).
    func check(_ store: some MigratableStore) async throws -> Int {
        let applied = try await store.appliedMigrations().map(\.name)
        if isMigration { return try await checkMigration(store, applied: applied) }
        try require(applied == migrations.steps.map(\.name), "the ledger holds \(applied)")
        try await store.checkSchema(
            of: isGraph ? [KillParent.self, KillChild.self] : [KillRow.self, KillChecksum.self])
        switch self {
        case .upserts, .partial, .replace:
            // Each group of rows against its checksum (upserts and patches write group 0 only).
            let rows = try await store.repository(KillRow.self).fetchAll()
            let sums = try await store.repository(KillChecksum.self).fetchAll()
            let byGroup = Dictionary(grouping: rows, by: \.group)
            let groups = self == .replace ? Array(0..<4) : [0]
            let strays = Set(byGroup.keys).subtracting(groups)
            try require(strays.isEmpty, "rows in groups \(strays.sorted()), which no write makes")
            for group in groups {
                let members = byGroup[group] ?? []
                guard let sum = sums.first(where: { $0.id == checksumID(group: group) }) else {
                    try require(members.isEmpty, "group \(group) has \(members.count) rows and no checksum")
                    continue
                }
                try require(members.count == sum.rows, "group \(group): \(members.count) rows, checksum \(sum.rows)")
                let generations = Set(members.map(\.generation))
                try require(
                    generations == [sum.generation],
                    "rows of generations \(generations.sorted()) beside a checksum of generation \(sum.generation)")
                let total = members.reduce(0) { $0 + $1.value }
                try require(total == sum.total, "group \(group) adds up to \(total), its checksum says \(sum.total)")
                let rewritten = members.filter { $0.untouched != 7 * $0.id }
                try require(rewritten.isEmpty, "\(rewritten.count) rows with a field no write assigns changed")
            }
            return sums.map(\.generation).max() ?? 0
        case .cascade, .graph:
            let parents = try await store.repository(KillParent.self).fetchAll()
            let children = try await store.repository(KillChild.self).fetchAll()
            let byParent = Dictionary(grouping: children, by: \.parentID)
            let orphans = Set(byParent.keys).subtracting(parents.map(\.id))
            try require(orphans.isEmpty, "children of parents that are not stored: \(orphans.sorted())")
            for parent in parents {
                let own = byParent[parent.id] ?? []
                try require(
                    own.count == parent.childCount,
                    "parent \(parent.id) has \(own.count) children, it says \(parent.childCount)")
                try require(
                    own.allSatisfy { $0.generation == parent.generation },
                    "parent \(parent.id) of generation \(parent.generation) has children of another generation")
            }
            if self == .cascade {
                let ids = parents.map(\.id).sorted()
                try require(ids.count <= 3, "\(ids.count) parents: a removal was lost")
                try require(
                    ids.isEmpty || ids == Array(ids[0]...ids[ids.count - 1]), "the parents are not consecutive: \(ids)")
            }
            return parents.map(\.generation).max() ?? 0
        case .migrateData, .migrateAddColumn, .migrateAlter:
            return 0
        }
    }

    private var isGraph: Bool { self == .cascade || self == .graph }

    /// The checksum row of a group of rows: one per group for `replace`, one for the others.
    private func checksumID(group: Int) -> String { self == .replace ? "replace-\(group)" : rawValue }

    private func checkMigration(_ store: some MigratableStore, applied: [String]) async throws -> Int {
        let names = migrations.steps.map(\.name)
        let expected = Array(1...Self.itemCount)
        if applied == [names[0]] {
            try await store.checkSchema(of: [KillItem.self])
            let items = try await store.repository(KillItem.self).fetch(orderBy: [.ascending(\.id)])
            try require(
                items == expected.map { KillItem(id: $0, value: 3 * $0, doubled: nil) },
                "at version 1 the items are not as step 1 wrote them")
            return 1
        }
        try require(applied == names, "the ledger holds \(applied)")
        switch self {
        case .migrateAddColumn:
            try await store.checkSchema(of: [KillItemTripled.self])
            let items = try await store.repository(KillItemTripled.self).fetch(orderBy: [.ascending(\.id)])
            try require(
                items == expected.map { KillItemTripled(id: $0, value: 3 * $0, doubled: nil, tripled: 9 * $0) },
                "at version 2 the items are not all tripled")
        case .migrateAlter:
            try await store.checkSchema(of: [KillItemReal.self])
            let items = try await store.repository(KillItemReal.self).fetch(orderBy: [.ascending(\.id)])
            try require(
                items == expected.map { KillItemReal(id: $0, value: Double(3 * $0), doubled: nil) },
                "at version 2 the values are not the same numbers as doubles")
        default:
            try await store.checkSchema(of: [KillItem.self])
            let items = try await store.repository(KillItem.self).fetch(orderBy: [.ascending(\.id)])
            try require(
                items == expected.map { KillItem(id: $0, value: 3 * $0, doubled: 6 * $0) },
                "at version 2 the items are not all doubled")
        }
        return 2
    }
}
