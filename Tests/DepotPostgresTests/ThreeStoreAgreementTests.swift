import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Synchronization
import Testing

/// The in-memory, SQLite and PostgreSQL stores given the same random writes and asked the same
/// random queries: every answer must be the same, in the same order, and so must every write's
/// outcome. A disagreement is reported with the seed, the step and the rows shrunk to the fewest
/// that still disagree.
@Suite(
    "Three stores agree", .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct ThreeStoreAgreementTests {
    /// The stores under comparison, the in-memory one first (the reference).
    struct Stores {
        var memory: InMemoryStore
        var sqlite: SQLiteStore
        var postgres: PostgresStore

        var all: [(name: String, store: any Store)] {
            [("in-memory", memory), ("SQLite", sqlite), ("PostgreSQL", postgres)]
        }

        /// Gives every store the search indexes the fuzzer's searches read.
        func migrate() async throws {
            try await memory.migrate(QueryFuzzer.searchMigrations)
            try await sqlite.migrate(QueryFuzzer.searchMigrations)
            try await postgres.migrate(QueryFuzzer.searchMigrations)
        }
    }

    /// One random query.
    struct Query: CustomStringConvertible {
        var filter: Filter<TestAirport>
        var ordering: [Ordering<TestAirport>]
        var limit: Int?
        var offset: Int?

        var description: String {
            "\(filter.node) order \(ordering.map(\.term)) limit \(limit.map(String.init) ?? "none") "
                + "offset \(offset.map(String.init) ?? "none")"
        }

        /// The rows, the count and a projection of two columns `store` answers.
        func answer(_ store: any Store) async throws -> (rows: [TestAirport], count: Int, projected: [String?]) {
            let airports = store.repository(TestAirport.self)
            return (
                try await airports.fetch(where: filter, orderBy: ordering, limit: limit, offset: offset),
                try await airports.count(where: filter),
                try await airports.select(
                    \.city, \.elevation, where: filter, orderBy: ordering, limit: limit, offset: offset
                ) {
                    city, elevation in city.map { "\($0) \(elevation)" }
                }
            )
        }
    }

    @Test(
        "random writes, 10,000 random queries and 1,000 random grouped queries give the same rows, in the same order, and the same counts and aggregates on the in-memory, SQLite and PostgreSQL stores"
    )
    func randomWritesAndQueriesAgree() async throws {
        try await HeavyHarness.run {
            let seed = UInt64(ProcessInfo.processInfo.environment["DEPOT_AGREEMENT_SEED"] ?? "") ?? 2_026_112_5
            var fuzzer = QueryFuzzer(random: SplitMix64(state: seed))
            try await PostgresTestServer.withStore { postgres in
                let stores = Stores(memory: InMemoryStore(), sqlite: try SQLiteStore.temporary(), postgres: postgres)
                try await stores.migrate()
                // Observers on every store, from before the first write: each change they deliver, applied
                // to the result before it, must give the result it carries.
                let observed = (0..<3).map { _ in
                    Query(
                        filter: fuzzer.filter(depth: 2), ordering: fuzzer.ordering(),
                        limit: fuzzer.chance(50) ? Int.random(in: 1...30, using: &fuzzer.random) : nil, offset: nil)
                }
                let watched = WatchedResults()
                var watchers: [Task<Void, Never>] = []
                for (name, store) in stores.all {
                    for (index, query) in observed.enumerated() {
                        watchers.append(watched.watch("\(name) #\(index)", store, query))
                    }
                }
                defer { for watcher in watchers { watcher.cancel() } }
                var nextKey = 0
                var queries = 0
                var aggregates = 0
                for step in 0..<40 {
                    let write = Self.randomWrite(&fuzzer, nextKey: &nextKey)
                    var outcomes: [String] = []
                    for (_, store) in stores.all {
                        do {
                            try await write.apply(store.repository(TestAirport.self))
                            outcomes.append("ok")
                        } catch let error as DepotError {
                            outcomes.append("\(error.kind)")
                        }
                    }
                    try #require(
                        Set(outcomes).count == 1,
                        "seed \(seed), step \(step): \(write) ended \(zip(stores.all.map(\.name), outcomes).map { "\($0): \($1)" })"
                    )
                    let contents = try await stores.all.asyncMap {
                        try await $0.store.repository(TestAirport.self).fetchAll()
                    }
                    try #require(
                        contents.allSatisfy { $0 == contents[0] },
                        "seed \(seed), step \(step): after \(write) the stores hold different rows")
                    for _ in 0..<25 {
                        aggregates += 1
                        let query = fuzzer.aggregateQuery()
                        // Rows compared as stored values (-0.0 equals 0.0, as in SQL), failures by kind.
                        let answers = await stores.all.asyncMap { entry -> (rows: [[StoredValue]]?, failure: String?) in
                            do {
                                return (try await entry.store.aggregate(query), nil)
                            } catch let error as DepotError {
                                return (nil, "\(error.kind)")
                            } catch {
                                return (nil, "\(error)")
                            }
                        }
                        if !answers.allSatisfy({ $0.rows == answers[0].rows && $0.failure == answers[0].failure }) {
                            Issue.record(
                                """
                                seed \(seed), step \(step), aggregate \(aggregates): \(query)
                                answers: \(zip(stores.all.map(\.name), answers).map { "\($0): \($1)" })
                                """)
                            return
                        }
                    }
                    for _ in 0..<250 {
                        queries += 1
                        let query = Query(
                            filter: fuzzer.filter(), ordering: fuzzer.ordering(),
                            limit: fuzzer.chance(50) ? Int.random(in: 0..<20, using: &fuzzer.random) : nil,
                            offset: fuzzer.chance(30) ? Int.random(in: 0..<10, using: &fuzzer.random) : nil)
                        if try await !Self.agree(query, on: stores) {
                            let shrunk = try await Self.shrink(contents[0], query)
                            Issue.record(
                                """
                                seed \(seed), step \(step), query \(queries): \(query)
                                shrunk to \(shrunk.count) row(s): \(shrunk)
                                answers: \(try await Self.answers(query, rows: shrunk))
                                """)
                            return
                        }
                    }
                }
                #expect(queries == 10_000)
                #expect(aggregates == 1_000)

                // Every observer ends on the stores' final answer, having delivered only consistent changes.
                for (name, store) in stores.all {
                    for (index, query) in observed.enumerated() {
                        let key = "\(name) #\(index)"
                        let fresh = try await store.repository(TestAirport.self)
                            .fetch(where: query.filter, orderBy: query.ordering, limit: query.limit)
                        #expect(
                            await eventually { watched.latest(key) == fresh },
                            "seed \(seed): the observer \(key) of \(query) ends on \(watched.latest(key)?.map(\.icao) ?? []), a fetch gives \(fresh.map(\.icao))"
                        )
                    }
                }
                #expect(watched.violations.isEmpty, "seed \(seed): \(watched.violations)")
                #expect(watched.deliveries > observed.count * 3, "the observers saw changes")
            }
        }
    }

    /// What the observers delivered: each one's latest result, and any change that did not add up.
    final class WatchedResults: Sendable {
        private struct State {
            var latest: [String: [TestAirport]] = [:]
            var violations: [String] = []
            var deliveries = 0
        }
        private let state = Mutex(State())

        func latest(_ key: String) -> [TestAirport]? { state.withLock { $0.latest[key] } }
        var violations: [String] { state.withLock { $0.violations } }
        var deliveries: Int { state.withLock { $0.deliveries } }

        /// Observes `query` on `store` under `key` until cancelled.
        func watch(_ key: String, _ store: any Store, _ query: Query) -> Task<Void, Never> {
            let changes = store.repository(TestAirport.self)
                .changes(where: query.filter, orderBy: query.ordering, limit: query.limit)
            return Task {
                var previous: [TestAirport] = []
                do {
                    for try await change in changes {
                        // The change must fit the result before it (applied(to:) answers the new
                        // result itself for one that does not), and then lead to the new one.
                        let fits =
                            change.removed.allSatisfy { previous.indices.contains($0) }
                            && previous.count - change.removed.count + change.inserted.count == change.result.count
                        let applied = fits ? change.applied(to: previous) : []
                        state.withLock { state in
                            state.deliveries += 1
                            state.latest[key] = change.result
                            if !fits || applied != change.result {
                                state.violations.append(
                                    "\(key): a change applied to \(previous.map(\.icao)) gives \(applied.map(\.icao)), "
                                        + "not its result \(change.result.map(\.icao))")
                            }
                        }
                        previous = change.result
                    }
                } catch {
                    state.withLock { $0.violations.append("\(key): the observation failed: \(error)") }
                }
            }
        }
    }

    /// A write applied to each store alike.
    struct Write: CustomStringConvertible {
        var description: String
        var apply: (Repository<TestAirport>) async throws -> Void
    }

    static func randomWrite(_ fuzzer: inout QueryFuzzer, nextKey: inout Int) -> Write {
        func fresh(_ count: Int) -> [TestAirport] {
            defer { nextKey += count }
            return (nextKey..<(nextKey + count)).map { fuzzer.airport($0) }
        }
        // Keys already written (some with a suffix the fuzzer added: those are new rows).
        func existing(_ count: Int) -> [TestAirport] {
            (0..<count).map { _ in fuzzer.airport(Int.random(in: 0..<max(nextKey, 1), using: &fuzzer.random)) }
        }
        switch nextKey < 60 ? 0 : Int.random(in: 0..<7, using: &fuzzer.random) {
        case 0:
            let rows = fresh(Int.random(in: 20...60, using: &fuzzer.random))
            return Write(description: "insert \(rows.count) new rows") { try await $0.insert(rows) }
        case 1:
            let rows = existing(Int.random(in: 1...30, using: &fuzzer.random))
            return Write(description: "upsert \(rows.count) rows over existing keys") { try await $0.upsert(rows) }
        case 2:
            let rows = existing(Int.random(in: 1...3, using: &fuzzer.random))
            return Write(description: "insert \(rows.count) rows, keys possibly taken") { try await $0.insert(rows) }
        case 3:
            let patches = existing(Int.random(in: 1...20, using: &fuzzer.random)).map { row in
                fuzzer.chance(50)
                    ? Patch<TestAirport>(key: row.icao).set(\.name, row.name)
                    : Patch<TestAirport>(key: row.icao).set(\.city, fuzzer.chance(30) ? .null : .value(row.name))
                        .set(\.elevation, row.elevation)
            }
            return Write(description: "apply \(patches.count) patches") { try await $0.apply(patches) }
        case 4:
            let filter = fuzzer.filter(depth: 1)
            return Write(description: "remove where \(filter.node)") { _ = try await $0.remove(where: filter) }
        case 5:
            let filter = fuzzer.filter(depth: 1)
            let city: String? = fuzzer.chance(30) ? nil : fuzzer.pick(fuzzer.texts)
            let step = fuzzer.pick([1.5, -0.25, 1e308, -3])
            return Write(description: "update where \(filter.node) set city \(city ?? "nil"), elevation + \(step)") {
                _ = try await $0.update(
                    where: filter, set: [.set(\.city, to: city), .set(\.elevation, to: \.elevation + step)])
            }
        default:
            let filter = fuzzer.filter(depth: 1)
            let rows = fresh(Int.random(in: 0...10, using: &fuzzer.random))
            return Write(description: "replace where \(filter.node) with \(rows.count) rows") {
                try await $0.replace(where: filter, with: rows)
            }
        }
    }

    /// Whether every store gives the reference's answer.
    static func agree(_ query: Query, on stores: Stores) async throws -> Bool {
        let reference = try await query.answer(stores.memory)
        for (_, store) in stores.all.dropFirst() {
            let answer = try await query.answer(store)
            guard answer.count == reference.count, answer.rows == reference.rows,
                answer.projected == reference.projected,
                answer.projected == reference.rows.map({ row in row.city.map { "\($0) \(row.elevation)" } }),
                answer.rows.map(\.icao).elementsEqual(
                    reference.rows.map(\.icao), by: { $0.utf8.elementsEqual($1.utf8) })
            else { return false }
        }
        return true
    }

    /// The answers of fresh stores holding only `rows`, by store.
    static func answers(_ query: Query, rows: [TestAirport]) async throws -> String {
        try await withFreshStores(rows) { stores in
            var lines: [String] = []
            for (name, store) in stores.all {
                let answer = try await query.answer(store)
                lines.append("\(name): \(answer.rows.map(\.icao)) count \(answer.count)")
            }
            return lines.joined(separator: "; ")
        }
    }

    /// The fewest of `rows` on which `query` still disagrees (removing halves, then single rows).
    static func shrink(_ rows: [TestAirport], _ query: Query) async throws -> [TestAirport] {
        var kept = rows
        var chunk = max(kept.count / 2, 1)
        var attempts = 0
        while chunk >= 1, attempts < 300 {
            var removedAny = false
            var start = 0
            while start < kept.count, attempts < 300 {
                attempts += 1
                var candidate = kept
                candidate.removeSubrange(start..<min(start + chunk, kept.count))
                let disagrees = try await withFreshStores(candidate) { try await !agree(query, on: $0) }
                if disagrees {
                    kept = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return kept
    }

    /// Runs `body` on three new stores holding `rows`.
    static func withFreshStores<T>(_ rows: [TestAirport], _ body: (Stores) async throws -> T) async throws -> T {
        var result: T?
        try await PostgresTestServer.withStore { postgres in
            let stores = Stores(memory: InMemoryStore(), sqlite: try SQLiteStore.temporary(), postgres: postgres)
            try await stores.migrate()
            for (_, store) in stores.all { try await store.repository(TestAirport.self).insert(rows) }
            result = try await body(stores)
        }
        return try #require(result)
    }
}
