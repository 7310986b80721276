import Depot
import DepotTesting
import Foundation

/// Random airports, writes and queries over them, from a small pool of tricky values: the stores'
/// agreement tests (in-memory against SQLite, and all three with PostgreSQL) draw from it. Seeded:
/// the same seed gives the same sequence.
public struct QueryFuzzer: Sendable {
    /// The generator; a test reads its seed to report it.
    public var random: SplitMix64

    /// The search indexes the fuzzer's `.matches` filters read (names and cities): run on every
    /// store under comparison before its first write.
    public static let searchMigrations = Migrations([
        Migration("1 airports", [.createTable(TestAirport.self)]),
        Migration(
            "2 search", [.createSearchIndex(TestAirport.self, \.name), .createSearchIndex(TestAirport.self, \.city)]),
    ])

    /// A search query from the pool: one or two texts, or the start of one.
    public mutating func searchQuery() -> String {
        let first = pick(texts)
        let start = chance(40) ? String(first.prefix(Int.random(in: 1...3, using: &random))) : first
        return chance(40) ? start + pick([" ", ", ", "-"]) + pick(texts) : start
    }

    /// A fuzzer drawing from `random`.
    public init(random: SplitMix64) {
        self.random = random
    }

    /// Texts that fold, compose, escape or sort in surprising ways.
    public let texts = [
        "", "a", "A", "ab", "B", "Z", "z", "é", "e\u{301}", "É", "Å", "Straße", "STRASSE", "São", "SÃO", "100%", "_x",
        "x_", "İ", "ı", "ﬁ", "Oslo", "oslo", "OSLO", "Ωmega", "ω", "ς", "Σ", "σ", "ß", "ẞ", "ǅ", "👍🏽", "e\u{301}\u{302}",
        "\u{1C80}", "ΐ",
    ]
    /// Numbers at the edges: negative zero, subnormals, extremes, infinities.
    public let numbers: [Double] = [
        -1000, -3.25, -0.0, 0, 0.5, 1, 2, 681, 681.5, 5431, 1e9, .leastNonzeroMagnitude, -.leastNormalMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity,
    ]

    /// One of `values`.
    public mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
    /// True `percent` times in 100.
    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    /// An airport whose key starts `K<index>`.
    public mutating func airport(_ index: Int) -> TestAirport {
        TestAirport(
            icao: "K\(index)" + (chance(20) ? pick(texts) : ""), iata: chance(30) ? nil : pick(texts),
            name: pick(texts) + pick(texts),
            city: chance(25) ? nil : pick(texts), country: pick(["NO", "SE", "no", "DE"]), elevation: pick(numbers),
            latitude: Double(Int.random(in: -89...89, using: &random)) + 0.5,
            longitude: Double(Int.random(in: -179...179, using: &random)) + 0.25)
    }

    /// A filter of nested conditions, up to about four levels deep.
    public mutating func filter(depth: Int = 0) -> Filter<TestAirport> {
        switch Int.random(in: 0..<(depth > 2 ? 10 : 14), using: &random) {
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
            let matching: TextMatching = pick([.caseInsensitive, .caseSensitive, .caseAndDiacriticInsensitive])
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .contains(\.name, pick(texts), matching)
            case 1: return .hasPrefix(\.city, pick(texts), matching)
            default: return .hasSuffix(\.name, pick(texts), matching)
            }
        case 8: return .in(\.iata, [pick(texts), pick(texts)])
        case 12:
            let matching: TextMatching = chance(70) ? .caseInsensitive : .caseAndDiacriticInsensitive
            return chance(60) ? .matches(\.name, searchQuery(), matching) : .matches(\.city, searchQuery(), matching)
        case 9:
            let center = Coordinate(
                latitude: pick([0, 45.5, -60, 89.9, -89.5]), longitude: pick([0, 10.75, -120, 179.9, -180]))
            return .within(
                kilometers: pick([10, 500, 2_000, 8_000, 21_000]), of: center, latitude: \.latitude,
                longitude: \.longitude)
        case 13: return !filter(depth: depth + 1)
        case 10: return filter(depth: depth + 1) && filter(depth: depth + 1)
        case 11: return filter(depth: depth + 1) || filter(depth: depth + 1)
        default: return !filter(depth: depth + 1)
        }
    }

    /// Up to two order terms (the key always ends the order).
    public mutating func ordering() -> [Ordering<TestAirport>] {
        var terms: [Ordering<TestAirport>] = []
        for _ in 0..<Int.random(in: 0..<3, using: &random) {
            switch Int.random(in: 0..<9, using: &random) {
            case 8:
                terms.append(
                    .relevance(\.name, to: searchQuery(), pick([.caseInsensitive, .caseAndDiacriticInsensitive])))
            case 6: terms.append(.ascending(\.name, pick([.caseInsensitive, .caseAndDiacriticInsensitive])))
            case 7: terms.append(.descending(\.city, pick([.caseInsensitive, .caseAndDiacriticInsensitive])))
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

    /// A grouped query over the airports: up to two grouping columns, up to four aggregates (sums
    /// and averages only of the coordinates, whose values add exactly in any order), a having
    /// condition, an order by aggregates or groups, a limit and an offset.
    public mutating func aggregateQuery() -> AggregateQuery {
        let table = TestAirport.schema.table
        let groupBy = Array(
            ["country", "iata", "city"].shuffled(using: &random).prefix(Int.random(in: 0...2, using: &random)))
        let candidates: [AggregateTerm] = [
            .init(.count, nil), .init(.count, "iata"), .init(.count, "city"), .init(.sum, "lat"), .init(.sum, "lon"),
            .init(.average, "lat"), .init(.average, "lon"), .init(.min, "name"), .init(.max, "name"),
            .init(.min, "iata"), .init(.max, "city"), .init(.min, "elevation"), .init(.max, "elevation"),
            .init(.max, "country"),
        ]
        var aggregates: [AggregateTerm] = []
        for _ in 0..<Int.random(in: (groupBy.isEmpty ? 1 : 0)...4, using: &random) {
            let term = pick(candidates)
            if !aggregates.contains(term) { aggregates.append(term) }
        }
        var having: AggregatePredicate?
        if chance(40) {
            let conditions: [AggregatePredicate] = [
                .compare(
                    .init(.count, nil), pick([.greater, .lessOrEqual, .equal]),
                    .integer(Int64(Int.random(in: 0...4, using: &random)))),
                .compare(.init(.min, "name"), pick([.less, .greaterOrEqual]), .text(pick(texts))),
                .compare(.init(.max, "elevation"), pick([.greater, .less]), .double(pick(numbers))),
                .compare(.init(.sum, "lat"), .greater, .double(Double(Int.random(in: -100...100, using: &random)))),
            ]
            having = chance(70) ? pick(conditions) : .or([pick(conditions), .not(pick(conditions))])
        }
        var ordering: [AggregateOrderTerm] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            if !groupBy.isEmpty, chance(40) {
                ordering.append(.group(pick(groupBy), descending: chance(50)))
            } else {
                ordering.append(.aggregate(pick(candidates), descending: chance(50)))
            }
        }
        return AggregateQuery(
            table: table, predicate: chance(60) ? filter(depth: 1).node : nil, groupBy: groupBy, aggregates: aggregates,
            having: having, ordering: ordering, limit: chance(40) ? Int.random(in: 0...8, using: &random) : nil,
            offset: chance(25) ? Int.random(in: 0...4, using: &random) : nil)
    }
}
