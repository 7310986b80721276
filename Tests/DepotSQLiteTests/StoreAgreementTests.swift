import Depot
import DepotSQLite
import DepotTesting
import Foundation
import Testing

/// Random airports and random queries over them, from a small pool of tricky values.
struct QueryFuzzer {
    var random: SplitMix64
    let texts = [
        "", "a", "A", "ab", "B", "Z", "z", "é", "e\u{301}", "É", "Å", "Straße", "STRASSE", "São", "SÃO", "100%", "_x",
        "x_", "İ", "ı", "ﬁ", "Oslo", "oslo", "OSLO", "Ωmega", "ω",
    ]
    let numbers: [Double] = [-1000, -3.25, -0.0, 0, 0.5, 1, 2, 681, 681.5, 5431, 1e9]

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func airport(_ index: Int) -> TestAirport {
        TestAirport(
            icao: "K\(index)" + (chance(20) ? pick(texts) : ""), iata: chance(30) ? nil : pick(texts),
            name: pick(texts) + pick(texts),
            city: chance(25) ? nil : pick(texts), country: pick(["NO", "SE", "no", "DE"]), elevation: pick(numbers),
            latitude: Double(Int.random(in: -89...89, using: &random)) + 0.5,
            longitude: Double(Int.random(in: -179...179, using: &random)) + 0.25)
    }

    mutating func filter(depth: Int = 0) -> Filter<TestAirport> {
        switch Int.random(in: 0..<(depth > 2 ? 9 : 12), using: &random) {
        case 0: return \.elevation > pick(numbers)
        case 1: return \.elevation <= pick(numbers)
        case 2: return \.name < pick(texts)
        case 3: return \.iata == pick(texts)
        case 4: return \.iata != pick(texts)
        case 5: return chance(50) ? \.iata == nil : \.city != nil
        case 6:
            return .in(
                \.country, (0..<Int.random(in: 0..<3, using: &random)).map { _ in pick(["NO", "SE", "no", "XX"]) })
        case 7:
            let matching: TextMatching = chance(50) ? .caseInsensitive : .caseSensitive
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .contains(\.name, pick(texts), matching)
            case 1: return .hasPrefix(\.city, pick(texts), matching)
            default: return .hasSuffix(\.name, pick(texts), matching)
            }
        case 8: return .in(\.iata, [pick(texts), pick(texts)])
        case 9: return filter(depth: depth + 1) && filter(depth: depth + 1)
        case 10: return filter(depth: depth + 1) || filter(depth: depth + 1)
        default: return !filter(depth: depth + 1)
        }
    }

    mutating func ordering() -> [Ordering<TestAirport>] {
        var terms: [Ordering<TestAirport>] = []
        for _ in 0..<Int.random(in: 0..<3, using: &random) {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: terms.append(.ascending(\.name))
            case 1: terms.append(.descending(\.iata))
            case 2: terms.append(.ascending(\.city))
            case 3: terms.append(.descending(\.elevation))
            case 4: terms.append(.ascending(\.country))
            default:
                terms.append(
                    .nearest(
                        to: Coordinate(latitude: pick([0, 45.5, -60]), longitude: pick([0, 10.75, -120])),
                        latitude: \.latitude, longitude: \.longitude))
            }
        }
        return terms
    }
}

@Suite("Stores agree", .timeLimit(.minutes(10)))
struct StoreAgreementTests {
    @Test("random filters, orders and pages give the same rows on the in-memory and SQLite stores")
    func randomQueriesAgree() async throws {
        var fuzzer = QueryFuzzer(random: SplitMix64(state: 2026))
        let rows = (0..<300).map { fuzzer.airport($0) }
        let memory = InMemoryStore()
        let sqlite = try SQLiteStore.temporary()
        try await memory.repository(TestAirport.self).upsert(rows)
        try await sqlite.repository(TestAirport.self).upsert(rows)
        var disagreements = 0
        for round in 0..<400 {
            let filter = fuzzer.filter()
            let ordering = fuzzer.ordering()
            let limit: Int? = fuzzer.chance(50) ? Int.random(in: 0..<20, using: &fuzzer.random) : nil
            let offset: Int? = fuzzer.chance(30) ? Int.random(in: 0..<10, using: &fuzzer.random) : nil
            let expected = try await memory.repository(TestAirport.self)
                .fetch(where: filter, orderBy: ordering, limit: limit, offset: offset).map(\.icao)
            let got = try await sqlite.repository(TestAirport.self)
                .fetch(where: filter, orderBy: ordering, limit: limit, offset: offset).map(\.icao)
            let countMemory = try await memory.repository(TestAirport.self).count(where: filter)
            let countSQLite = try await sqlite.repository(TestAirport.self).count(where: filter)
            if !expected.elementsEqual(got, by: { $0.utf8.elementsEqual($1.utf8) }) || countMemory != countSQLite {
                disagreements += 1
                if disagreements <= 3 {
                    Issue.record(
                        "round \(round): \(filter.node) order \(ordering.map(\.term)) limit \(limit ?? -1) offset \(offset ?? -1): in-memory \(expected) (\(countMemory)) vs SQLite \(got) (\(countSQLite))"
                    )
                }
            }
        }
        #expect(disagreements == 0)
    }
}
