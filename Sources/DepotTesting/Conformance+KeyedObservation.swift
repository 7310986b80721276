import Depot
import Foundation
import Testing

// Axes crossed (ATTACK.md), on every store the suite runs on (in-memory, SQLite, PostgreSQL, a
// SyncedStore over SQLite and over memory, and the @Entity-fixture suites):
// - writer: upsert of one, a 3-row batch, a batch past StoreCommit.keyLimit, remove by key, patch,
//   update by key IN, remove by another filter, a two-call transaction, a rollback, two writers at once;
// - key type: text, date finer than the microsecond, decimal, double extremes, UUID, two columns;
// - order: a double with ties, text descending, folded text, key only; a filter with OR;
// - failure: a row that no longer decodes (keyed and whole reads), then fixed.
// Not crossed: another process's commit during a keyed read (the README's documented gap), schema
// changes while observing (they announce "anything", which reads whole).

extension StoreConformance {
    /// Observers that read again only the rows a commit named by key: every result they deliver
    /// must be what reading the query whole gives, and its diff must turn the previous result
    /// into it.
    static let keyedObservationCases: [ConformanceCase] = [
        ConformanceCase("an observer reading changed rows by key delivers what a whole read gives, after any write") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let names = ["Alta", "alta", "Åre", "Bodø", "Zürich", "Ørland", "Vik", "vik", "Ås", "Oslo"]
            let countries = ["NO", "SE", "DK"]
            let elevations: [Double] = [0, 100, 300, 301, 500]
            // Ties on elevation and on folded names: the key decides, as in every store.
            let queries: [(name: String, filter: Filter<TestAirport>?, order: [Ordering<TestAirport>])] = [
                ("NO or high, by elevation", \.country == "NO" || \.elevation > 300, [.ascending(\.elevation)]),
                ("all, by name descending", nil, [.descending(\.name)]),
                ("SE, by name folded", \.country == "SE", [.ascending(\.name, .caseAndDiacriticInsensitive)]),
                ("all, by key", nil, []),
            ]
            for seed: UInt64 in [7, 11, 23] {
                var random = SplitMix64(state: seed)
                var observers = queries.map {
                    airports.changes(where: $0.filter, orderBy: $0.order).makeAsyncIterator()
                }
                var delivered: [[TestAirport]] = []
                for index in observers.indices {
                    let first = try await observers[index].next()
                    delivered.append(try #require(first, "\(queries[index].name): no first result").result)
                }
                func code() -> String { "K\(Int.random(in: 0..<24, using: &random))" }
                func airport() -> TestAirport {
                    TestAirport(
                        icao: code(),
                        iata: Bool.random(using: &random) ? nil : "X\(Int.random(in: 0..<9, using: &random))",
                        name: names[Int.random(in: names.indices, using: &random)], city: nil,
                        country: countries[Int.random(in: countries.indices, using: &random)],
                        elevation: elevations[Int.random(in: elevations.indices, using: &random)])
                }
                for step in 0..<40 {
                    let operation: String
                    switch Int.random(in: 0..<9, using: &random) {
                    case 0:
                        operation = "upsert one"
                        try await airports.upsert(airport())
                    case 1:
                        operation = "upsert three in one transaction"
                        try await airports.upsert([airport(), airport(), airport()].uniqued(by: \.icao))
                    case 2:
                        operation = "remove by key"
                        _ = try await airports.remove(code())
                    case 3:
                        operation = "patch the elevation"
                        // A key not stored fails (the patch lacks required columns), writing nothing.
                        let patch = Patch<TestAirport>(key: code())
                            .set(\.elevation, Double(Int.random(in: 0..<6, using: &random) * 100))
                        do {
                            try await airports.apply([patch])
                        } catch let error as DepotError where error.kind == .missingColumns {}
                    case 4:
                        operation = "update where key in two"
                        let keys = [code(), code()]
                        try await airports.update(where: .in(\.icao, keys), set: \.country, to: "NO")
                    case 5:
                        operation = "remove where (not by key)"
                        _ = try await airports.remove(where: \.elevation == 100 && \.country == "DK")
                    case 6:
                        operation = "transaction over two calls"
                        let (written, gone) = (airport(), code())
                        try await store.write { tx in
                            let inside = tx.repository(TestAirport.self)
                            try await inside.upsert(written)
                            _ = try await inside.remove(gone)
                        }
                    case 7:
                        // More keys than a commit names (StoreCommit.keyLimit): the table only.
                        operation = "upsert \(StoreCommit.keyLimit + 1) rows in one call"
                        let base = airport()
                        try await airports.upsert(
                            (0...StoreCommit.keyLimit).map { index in
                                var row = base
                                row.icao = "M\(index)"
                                row.elevation = Double(index % 7) * 100
                                return row
                            })
                    default:
                        operation = "rolled back"
                        let written = airport()
                        await #expect(throws: Abort.self) {
                            try await store.write { tx in
                                try await tx.repository(TestAirport.self).upsert(written)
                                throw Abort()
                            }
                        }
                    }
                    for (index, query) in queries.enumerated() {
                        let whole = try await airports.fetch(where: query.filter, orderBy: query.order)
                        guard whole != delivered[index] else { continue }
                        let context = "seed \(seed), step \(step) (\(operation)), \(query.name)"
                        let next = try await observers[index].next()
                        let change = try #require(next, "\(context): the observation ended")
                        #expect(change.result == whole, "\(context)")
                        #expect(change.applied(to: delivered[index]) == whole, "\(context): the diff")
                        delivered[index] = change.result
                    }
                }
                // Most re-reads were by key (the remove-where and the first read after a whole
                // read are not): the cheaper path ran, and gave the answers above.
                #expect(keyedObservationReads(on: store) > 20, "seed \(seed)")
                observers.removeAll()
                _ = try await airports.removeAll()
                try await airports.insert(TestAirport.sample)
            }
        },
        ConformanceCase(
            "an observer reading changed rows by key keeps up with keys of every type: dates finer than the store keeps, decimals, doubles, UUIDs, two columns"
        ) { (store: any Store) async throws in
            // A date key finer than a microsecond: PostgreSQL keeps the microsecond, so the key a
            // write names is not the key the observer holds.
            let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
            try await checkKeyedObservation(
                store, (0..<6).map { KeyedDate(at: base + Double($0) + 0.123_456_789, note: "n\($0)") },
                note: \.note, remove: { try await $0.remove($1.at) }, keys: { .in(\.at, $0.map(\.at)) })
            try await checkKeyedObservation(
                store, (0..<6).map { KeyedDecimal(price: Decimal(21 + 2 * $0) / 2, note: "n\($0)") },
                note: \.note, remove: { try await $0.remove($1.price) }, keys: { .in(\.price, $0.map(\.price)) })
            let doubles: [Double] = [-1e300, -0.0, 0.1 + 0.2, 1 / 3, .leastNonzeroMagnitude, 1e300]
            try await checkKeyedObservation(
                store, doubles.enumerated().map { KeyedDouble(x: $0.element, note: "n\($0.offset)") }, note: \.note,
                remove: { try await $0.remove($1.x) }, keys: { .in(\.x, $0.map(\.x)) })
            try await checkKeyedObservation(
                store, (0..<6).map { _ in KeyedUUID(id: UUID(), note: "n") },
                note: \.note, remove: { try await $0.remove($1.id) }, keys: { .in(\.id, $0.map(\.id)) })
            try await checkKeyedObservation(
                store, (0..<6).map { KeyedPair(site: ["a", "ab", "b"][$0 % 3], number: $0 / 3, note: "n\($0)") },
                note: \.note, remove: { try await $0.remove($1.site, $1.number) },
                keys: { rows in
                    var filter = Filter<KeyedPair>.nothing
                    for row in rows {
                        let one: Filter<KeyedPair> = \.site == row.site && \.number == row.number
                        filter = filter || one
                    }
                    return filter
                })
        },
        ConformanceCase(
            "an observer reading changed rows by key while two writers commit at once ends on what a whole read gives, each diff turning one result into the next"
        ) { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            var observer = airports.changes(where: \.elevation < 250, orderBy: [.descending(\.name)])
                .makeAsyncIterator()
            let first = try await observer.next()
            var delivered = try #require(first, "no first result").result
            // Two writers, 60 commits each, on rows they share (K0…K9) and rows of their own.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<2 {
                    group.addTask {
                        var random = SplitMix64(state: UInt64(31 + writer))
                        for step in 0..<60 {
                            let code = "K\(Int.random(in: 0..<10, using: &random))"
                            let own = "W\(writer)-\(step % 7)"
                            switch step % 3 {
                            case 0:
                                try await airports.upsert(
                                    TestAirport(
                                        icao: code, iata: nil, name: "N\(step)", city: nil, country: "NO",
                                        elevation: Double(Int.random(in: 0..<5, using: &random) * 100)))
                            case 1:
                                _ = try await airports.remove(code)
                            default:
                                try await airports.upsert(
                                    TestAirport(
                                        icao: own, iata: nil, name: "W\(step)", city: nil, country: "SE",
                                        elevation: Double(step % 4) * 100))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let whole = try await airports.fetch(where: \.elevation < 250, orderBy: [.descending(\.name)])
            var deliveries = 0
            while delivered != whole {
                let next = try await observer.next()
                let change = try #require(next, "the observation ended after \(deliveries) results")
                #expect(change.applied(to: delivered) == change.result, "result \(deliveries + 1): the diff")
                #expect(
                    Set(change.result.map(\.icao)).count == change.result.count,
                    "result \(deliveries + 1): no row twice")
                delivered = change.result
                deliveries += 1
                #expect(deliveries <= 121, "one result per commit at most")
                if deliveries > 121 { break }
            }
            #expect(delivered == whole)
        },
        ConformanceCase(
            "an observer whose read fails throws, keeps what it delivered, and its next change turns that into the current result"
        ) { (store: any Store) async throws in
            let written = store.repository(KindText.self)
            let observed = store.repository(KindSurface.self)
            try await written.insert([KindText(id: 1, kind: "grass"), KindText(id: 2, kind: "gravel")])
            let stored = [KindSurface(id: 1, kind: .grass), KindSurface(id: 2, kind: .gravel)]
            // Unlimited: changed rows are read by key; limited: the query is read whole.
            for limit in [nil, 10] as [Int?] {
                let context = limit == nil ? "read by key" : "read whole"
                var observer = observed.changes(limit: limit).makeAsyncIterator()
                let first = try await observer.next()
                let delivered = try #require(first, "\(context): no first result").result
                #expect(delivered == stored, "\(context)")
                // A row no KindSurface can hold: the read fails, naming what it found.
                try await written.upsert(KindText(id: 3, kind: "lava"))
                let failure = await #expect(throws: DepotError.self, "\(context)") { _ = try await observer.next() }
                #expect(failure?.message.contains("lava") == true, "\(context): \(String(describing: failure))")
                try await written.upsert(KindText(id: 3, kind: "asphalt"))
                let next = try await observer.next()
                let change = try #require(next, "\(context): the observation ended")
                #expect(change.result == stored + [KindSurface(id: 3, kind: .asphalt)], "\(context)")
                #expect(change.applied(to: delivered) == change.result, "\(context): the diff")
                #expect(try await written.remove(3))
                let after = try await observer.next()
                let removal = try #require(after, "\(context): the observation ended")
                #expect(removal.result == stored, "\(context)")
                #expect(removal.applied(to: change.result) == stored, "\(context): the diff")
            }
        },
    ]
}

/// A kind as any text.
struct KindText: Entity, Equatable {
    var id: Int
    var kind: String
    static let schema = Schema<KindText>("observed_kinds", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.kind, "kind")
    }
}

/// The same rows, read as surfaces: a text that names no surface fails to decode.
struct KindSurface: Entity, Equatable {
    var id: Int
    var kind: Surface
    static let schema = Schema<KindSurface>("observed_kinds", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.kind, "kind")
    }
}

/// Observes every row of `rows`' table (in key order) while rows are inserted, rewritten, updated
/// and removed by key, one call at a time; each result must be what a whole read gives.
private func checkKeyedObservation<Row: Entity & Equatable>(
    _ store: any Store, _ rows: [Row], note: WritableKeyPath<Row, String> & Sendable,
    remove: (Repository<Row>, Row) async throws -> Bool, keys: ([Row]) -> Filter<Row>
) async throws {
    let repository = store.repository(Row.self)
    _ = try await repository.removeAll()
    let keyedBefore = keyedObservationReads(on: store)
    var observer = repository.changes().makeAsyncIterator()
    let first = try await observer.next()
    var delivered = try #require(first, "\(Row.self): no first result").result
    #expect(delivered.isEmpty)
    func edited(_ row: Row, _ text: String) -> Row {
        var row = row
        row[keyPath: note] = text
        return row
    }
    let steps = [
        "insert four", "insert one", "rewrite one", "remove one by key", "update two by key",
        "upsert two, one new", "remove two by key", "remove the rest by key",
    ]
    for name in steps {
        switch name {
        case "insert four": try await repository.insert(Array(rows.prefix(4)))
        case "insert one": try await repository.insert(rows[4])
        case "rewrite one": try await repository.upsert(edited(rows[1], "rewritten"))
        case "remove one by key":
            let removed = try await remove(repository, rows[0])
            #expect(removed, "\(Row.self): the row was there to remove")
        case "update two by key": try await repository.update(where: keys([rows[2], rows[3]]), set: note, to: "u")
        case "upsert two, one new": try await repository.upsert([edited(rows[2], "again"), rows[5]])
        case "remove two by key": try await repository.remove(where: keys([rows[3], rows[5]]))
        default: try await repository.remove(where: keys(Array(rows.prefix(5))))
        }
        let whole = try await repository.fetchAll()
        guard whole != delivered else { continue }
        let next = try await observer.next()
        let change = try #require(next, "\(Row.self), after \(name): the observation ended")
        #expect(change.result == whole, "\(Row.self), after \(name)")
        #expect(change.applied(to: delivered) == whole, "\(Row.self), after \(name): the diff")
        delivered = change.result
    }
    #expect(delivered.isEmpty, "\(Row.self): every row was removed")
    // Every write but the first insert named its rows by key: the reads after them were by key.
    #expect(keyedObservationReads(on: store) - keyedBefore >= 5, "\(Row.self): reads by key")
}

/// Rows keyed by a date.
struct KeyedDate: Entity, Equatable {
    var at: Date
    var note: String
    static let schema = Schema<KeyedDate>("keyed_dates", primaryKey: \.at) {
        Column(\.at, "at")
        Column(\.note, "note")
    }
}

/// Rows keyed by a decimal.
struct KeyedDecimal: Entity, Equatable {
    var price: Decimal
    var note: String
    static let schema = Schema<KeyedDecimal>("keyed_decimals", primaryKey: \.price) {
        Column(\.price, "price")
        Column(\.note, "note")
    }
}

/// Rows keyed by a double.
struct KeyedDouble: Entity, Equatable {
    var x: Double
    var note: String
    static let schema = Schema<KeyedDouble>("keyed_doubles", primaryKey: \.x) {
        Column(\.x, "x")
        Column(\.note, "note")
    }
}

/// Rows keyed by a UUID.
struct KeyedUUID: Entity, Equatable {
    var id: UUID
    var note: String
    static let schema = Schema<KeyedUUID>("keyed_uuids", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.note, "note")
    }
}

/// Rows keyed by two columns.
struct KeyedPair: Entity, Equatable {
    var site: String
    var number: Int
    var note: String
    static let schema = Schema<KeyedPair>("keyed_pairs", primaryKey: \.site, \.number) {
        Column(\.site, "site")
        Column(\.number, "number")
        Column(\.note, "note")
    }
}

extension Array {
    fileprivate func uniqued(by key: (Element) -> String) -> [Element] {
        var seen: Set<String> = []
        return filter { seen.insert(key($0)).inserted }
    }
}
