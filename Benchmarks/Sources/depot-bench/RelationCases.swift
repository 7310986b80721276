import BenchHarness
import Depot
import DepotSQLite
import Foundation
import GRDBSQLite

// Relations (issue #12): parents with their children loaded by an include, against the same rows
// loaded by hand through the C API — the parents, then their children by one JSON array of keys
// (the query a careful engineer writes to avoid N+1 and the bind-parameter limit), stitched with a
// dictionary. SQLite file databases, release build.

struct BenchParent: Entity {
    var id: Int
    var name: String
    static let schema = Schema<BenchParent>("parents", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "name")
    }
    static let children = ToMany(BenchChild.parent)
    static var relations: [any Relation<BenchParent>] { [children] }
}

struct BenchChild: Entity {
    var id: Int
    var parent: Int
    var name: String
    var value: Double
    static let schema = Schema<BenchChild>("children", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.parent, "parent")
        Column(\.name, "name")
        Column(\.value, "value")
    }
    static let parent = ToOne<BenchChild, BenchParent>(\.parent, onDelete: .cascade)
    static var relations: [any Relation<BenchChild>] { [parent] }
}

enum RelationCases {
    @MainActor
    static func run(parents count: Int, childrenPerParent: Int) async throws -> [BenchResult] {
        let name = "include children"
        if !selected(name) { return [] }
        let childCount = count * childrenPerParent
        func seed(_ path: String) async throws { try await Self.seed(path, parents: count, children: childCount) }
        var loadedCount = 0
        let result = try await compare(
            name, n: childCount, rounds: 9,
            subjectPrepare: seed, openSubject: { try SQLiteStore(path: $0).repository(BenchParent.self) },
            subject: { repository in
                let loaded = try await repository.fetch(including: [BenchParent.children])
                loadedCount = try loaded.reduce(0) { try $0 + $1[BenchParent.children].count }
            },
            // The same tables and rows, written by Depot: only the reads are compared.
            baselinePrepare: seed, openBaseline: RawDatabase.init(path:),
            baseline: { database in
                let stitched = rawInclude(database)
                precondition(stitched.reduce(0) { $0 + $1.1.count } == childCount)
            })
        guard loadedCount == childCount else {
            throw BenchError(description: "\(name): loaded \(loadedCount) children, expected \(childCount)")
        }
        return result.map { [$0] } ?? []
    }

    /// `parents` parents and `children` children spread evenly over them, written by Depot.
    static func seed(_ path: String, parents count: Int, children childCount: Int) async throws {
        let parents = (0..<count).map { BenchParent(id: $0, name: "parent \($0)") }
        let children = (0..<childCount).map {
            BenchChild(id: $0, parent: $0 % count, name: "child \($0)", value: Double($0) / 3)
        }
        try await SQLiteStore(path: path).write { tx in
            try await tx.repository(BenchParent.self).insert(parents)
            try await tx.repository(BenchChild.self).insert(children)
        }
    }

    /// Parents, then their children by a JSON array of the parents' keys, matched by hashing.
    static func rawInclude(_ database: RawDatabase) -> [(BenchParent, [BenchChild])] {
        var parents: [BenchParent] = []
        let parentStatement = database.prepare("SELECT \"id\", \"name\" FROM \"parents\" ORDER BY \"id\"")
        while sqlite3_step(parentStatement) == SQLITE_ROW {
            parents.append(
                BenchParent(
                    id: Int(sqlite3_column_int64(parentStatement, 0)),
                    name: RawDatabase.text(parentStatement, 1) ?? ""))
        }
        sqlite3_finalize(parentStatement)
        let keys = "[" + parents.map { String($0.id) }.joined(separator: ",") + "]"
        let childStatement = database.prepare(
            "SELECT \"id\", \"parent\", \"name\", \"value\" FROM \"children\" "
                + "WHERE \"parent\" IN (SELECT value FROM json_each(?)) ORDER BY \"id\"")
        RawDatabase.bind(childStatement, 1, keys)
        var byParent: [Int: [BenchChild]] = [:]
        while sqlite3_step(childStatement) == SQLITE_ROW {
            let child = BenchChild(
                id: Int(sqlite3_column_int64(childStatement, 0)), parent: Int(sqlite3_column_int64(childStatement, 1)),
                name: RawDatabase.text(childStatement, 2) ?? "", value: sqlite3_column_double(childStatement, 3))
            byParent[child.parent, default: []].append(child)
        }
        sqlite3_finalize(childStatement)
        return parents.map { ($0, byParent[$0.id] ?? []) }
    }
}
