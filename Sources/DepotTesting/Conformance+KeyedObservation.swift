import Depot
import Foundation
import Testing

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
                    switch Int.random(in: 0..<8, using: &random) {
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
        }
    ]
}

extension Array {
    fileprivate func uniqued(by key: (Element) -> String) -> [Element] {
        var seen: Set<String> = []
        return filter { seen.insert(key($0)).inserted }
    }
}
