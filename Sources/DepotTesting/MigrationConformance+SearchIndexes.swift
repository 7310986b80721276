import Depot
import DepotSQL
import Foundation
import Testing

// Schema change × the structures Depot derives from a table × store (trust issue, item 20).
// Axes: schema change — rename column, rename table, change another column's type (SQLite rebuilds
// the table), drop a searched column, drop + recreate, erase + recreate; structure — the search
// index (word table, triggers, functions), a declared index; writer — Depot before and after each
// change. After each: writes work, `.matches` equals a scan of the rows (or, with no index, says so:
// never stale words), and on SQL stores nothing of the old names is left in the catalog.

/// A searched row before the renames.
private struct Searched: Entity, Equatable {
    var id: String
    var name: String
    var note: Int?

    static let schema = Schema<Searched>("searched", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "name")
        Column(\.note, "note")
    }
}

/// The same rows after `name` became `title`.
private struct Titled: Entity, Equatable {
    var id: String
    var title: String
    var note: Int?

    static let schema = Schema<Titled>("searched", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.title, "title")
        Column(\.note, "note")
    }
}

/// The same rows after the table became `found` and `note` became text.
private struct Found: Entity, Equatable {
    var id: String
    var title: String
    var note: String?

    static let schema = Schema<Found>("found", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.title, "title")
        Column(\.note, "note")
    }
}

/// Whether `repository`'s `.matches` on `text` answers as a scan does for each word, or refuses
/// for want of an index (never stale words).
private func searchAgrees<Root: Entity>(
    _ repository: Repository<Root>, _ text: KeyPath<Root, String>, key: KeyPath<Root, String>,
    words: [String], expectIndex: Bool, _ label: String
) async throws {
    let rows = try await repository.fetch()
    for word in words {
        let expected = rows.filter { row in
            TextSearch.tokens(of: row[keyPath: text], .caseInsensitive).contains { $0.hasPrefix(word) }
        }.map { $0[keyPath: key] }.sorted()
        do {
            let found = try await repository.fetch(where: .matches(text, word)).map { $0[keyPath: key] }.sorted()
            #expect(found == expected, "\(label): matches '\(word)'")
        } catch let error as DepotError where error.kind == .invalidQuery && !expectIndex {
            #expect(error.message.contains("createSearchIndex"), "\(label): \(error.message)")
        }
    }
}

/// The catalog's names that start with `prefix#` (search indexes, their tables, triggers and
/// functions), on a store that runs SQL; `nil` on one that does not.
private func leftovers(_ store: any MigratableStore, _ prefix: String) async throws -> [String]? {
    let pattern = prefix + "#%"
    guard let store = store as? any SQLRunning else { return nil }
    return try await store.sql(
        SQL(
            sqlite: "SELECT name FROM sqlite_master WHERE name LIKE \(pattern)",
            postgres: "SELECT relname::text FROM pg_class WHERE relname LIKE \(pattern) AND relnamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
                + "UNION ALL SELECT proname::text FROM pg_proc WHERE proname LIKE \(pattern) AND pronamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
                + "UNION ALL SELECT tgname::text FROM pg_trigger WHERE tgname LIKE \(pattern) AND tgrelid IN "
                + "(SELECT oid FROM pg_class WHERE relnamespace = "
                + "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()))"),
        decoding: String.self)
}

/// Expects no catalog name under `prefix#` on a store that runs SQL; the in-memory store has no
/// catalog to check (it derives nothing from its tables).
private func expectNoLeftovers(_ store: any MigratableStore, _ prefix: String, _ label: String) async throws {
    guard let names = try await leftovers(store, prefix) else { return }
    #expect(names == [], "\(label): \(names)")
}

/// A member before the renames: `mail` unique, `team` indexed.
private struct Member: Entity, Equatable {
    var id: String
    var mail: String
    var team: Int?

    static let schema = Schema<Member>("members", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.mail, "mail")
        Column(\.team, "team")
    }
}

/// The same rows after `mail` became `email`, the table `people`, and `team` text.
private struct Person: Entity, Equatable {
    var id: String
    var email: String
    var team: String?

    static let schema = Schema<Person>("people", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.email, "email")
        Column(\.team, "team")
    }
}

/// The table once renamed, before `team` became text.
private struct RenamedMember: Entity, Equatable {
    var id: String
    var email: String
    var team: Int?

    static let schema = Schema<RenamedMember>("people", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.email, "email")
        Column(\.team, "team")
    }
}

/// The declared (non-key) indexes on `table`, on a store that runs SQL; `nil` on one that does not.
private func declaredIndexes(_ store: any MigratableStore, on table: String) async throws -> [String]? {
    guard let store = store as? any SQLRunning else { return nil }
    return try await store.sql(
        SQL(
            sqlite: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = \(table) "
                + "AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name",
            postgres: "SELECT indexname::text FROM pg_indexes WHERE tablename = \(table) "
                + "AND schemaname = current_schema() AND indexname NOT LIKE '%pkey' ORDER BY indexname"),
        decoding: String.self)
}

extension MigrationConformance {
    static let searchLifecycleCases: [MigrationCase] = [
        MigrationCase("observers of a renamed and rebuilt table see writes by this store and by another one") { open in
            let store = try await open()
            let steps = Migrations([
                Migration("1", [.createTable(Member.self)]),
                Migration(
                    "2", [.renameColumn("mail", to: "email", in: "members"), .renameTable("members", to: "people")]),
                Migration("3", [.alterColumn("team", to: .text, nullable: true, in: "people")]),
            ])
            try await store.migrate(Migrations(Array(steps.steps.prefix(1))))
            try await store.repository(Member.self).insert(Member(id: "a", mail: "a@x", team: 1))
            try await store.migrate(steps)
            let people = store.repository(Person.self)
            var observed = people.observe(orderBy: [.ascending(\.id)]).makeAsyncIterator()
            #expect(try await observed.next()?.map(\.id) == ["a"])
            try await people.insert(Person(id: "b", email: "b@x", team: "t"))
            #expect(try await observed.next()?.map(\.id) == ["a", "b"], "a write through the store itself")
            let other = try await open()
            try await other.repository(Person.self).insert(Person(id: "c", email: "c@x", team: nil))
            #expect(try await observed.next()?.map(\.id) == ["a", "b", "c"], "a write through another store")
        },
        MigrationCase("declared and unique indexes follow renames and a rebuild: duplicates still refused") { open in
            let store = try await open()
            var steps = [
                Migration(
                    "1",
                    [
                        .createTable(Member.self),
                        .createIndex("members_mail", on: "members", columns: ["mail"], unique: true),
                        .createIndex("members_team", on: "members", columns: ["team"]),
                    ])
            ]
            try await store.migrate(Migrations(steps))
            try await store.repository(Member.self).insert(Member(id: "a", mail: "a@x", team: 1))
            steps.append(
                Migration(
                    "2", [.renameColumn("mail", to: "email", in: "members"), .renameTable("members", to: "people")]))
            steps.append(Migration("3", [.alterColumn("team", to: .text, nullable: true, in: "people")]))
            for version in 2...3 {
                try await store.migrate(Migrations(Array(steps.prefix(version))))
                let label = "after step \(version)"
                let duplicate: DepotError?
                if version == 2 {
                    let table = store.repository(RenamedMember.self)
                    duplicate = await #expect(throws: DepotError.self, "\(label)") {
                        try await table.insert(RenamedMember(id: "b", email: "a@x", team: nil))
                    }
                    try await table.insert(RenamedMember(id: "p2", email: "p2@x", team: 2))
                } else {
                    let table = store.repository(Person.self)
                    duplicate = await #expect(throws: DepotError.self, "\(label)") {
                        try await table.insert(Person(id: "b", email: "a@x", team: nil))
                    }
                    try await table.insert(Person(id: "p3", email: "p3@x", team: "t"))
                }
                #expect(duplicate?.kind == .constraintViolation, "\(label): \(String(describing: duplicate))")
                if let indexes = try await declaredIndexes(store, on: "people") {
                    #expect(indexes.count == 2, "\(label): both indexes on the table: \(indexes)")
                }
            }
            #expect(try await declaredIndexes(store, on: "members") ?? [] == [], "nothing left on the old name")
            let people = try await store.repository(Person.self).fetch(orderBy: [.ascending(\.id)])
            #expect(people.map(\.email) == ["a@x", "p2@x", "p3@x"])
            #expect(people.first?.team == "1", "the integer became text")
        },
        MigrationCase("the search index follows every schema change: renames, a rebuild, drops, erase") { open in
            let store = try await open()
            let words = ["wom", "quok", "emu", "ba", "zz"]
            var steps = [
                Migration("1", [.createTable(Searched.self), .createSearchIndex(Searched.self, \.name)]),
                Migration("2", [.createIndex("searched_note", on: "searched", columns: ["note"])]),
            ]
            try await store.migrate(Migrations(steps))
            try await store.repository(Searched.self).insert([
                Searched(id: "a", name: "Wombat Park", note: 1), Searched(id: "b", name: "Quokka Bay", note: 2),
            ])

            steps.append(Migration("3", [.renameColumn("name", to: "title", in: "searched")]))
            try await store.migrate(Migrations(steps))
            let titled = store.repository(Titled.self)
            try await titled.insert(Titled(id: "c", title: "Emu Field", note: 3))
            try await searchAgrees(titled, \.title, key: \.id, words: words, expectIndex: true, "renamed column")

            steps.append(Migration("4", [.renameTable("searched", to: "found")]))
            steps.append(Migration("5", [.alterColumn("note", to: .text, nullable: true, in: "found")]))
            try await store.migrate(Migrations(steps))
            let found = store.repository(Found.self)
            try await found.insert(Found(id: "d", title: "Bandicoot Wombat", note: "x"))
            try await found.update(where: \.id == "a", set: \.title, to: "Zz Top")
            try await searchAgrees(found, \.title, key: \.id, words: words, expectIndex: true, "renamed table, rebuilt")
            try await expectNoLeftovers(store, "searched", "nothing left under the old table's name")

            // Dropped and created again: no stale words, whatever the store.
            steps.append(Migration("6", [.dropTable("found"), .createTable(Found.self)]))
            try await store.migrate(Migrations(steps))
            try await expectNoLeftovers(store, "found", "the word table went with its table")
            try await found.insert(Found(id: "e", title: "Kiwi Hut", note: nil))
            try await searchAgrees(found, \.title, key: \.id, words: words, expectIndex: false, "recreated")
            steps.append(Migration("7", [.createSearchIndex(Found.self, \.title)]))
            steps.append(Migration("8", [.dropColumn("title", from: "found")]))
            try await store.migrate(Migrations(steps))
            try await expectNoLeftovers(store, "found", "a dropped column's index went with it")

            // Erased and recreated: the first steps run again on an empty database.
            try await store.eraseDatabase()
            try await expectNoLeftovers(store, "searched", "after erase")
            try await store.migrate(Migrations(Array(steps.prefix(2))))
            let searched = store.repository(Searched.self)
            try await searched.insert(Searched(id: "f", name: "Wombat Again", note: nil))
            try await searchAgrees(searched, \.name, key: \.id, words: words, expectIndex: true, "erased")
        },
    ]
}
