import Depot
import Foundation
import Testing

/// Names that sort differently by bytes, by folded text and by folded text without diacritics.
private let people: [TestAirport] = [
    ("P1", "banana", "Köln"), ("P2", "Apple", nil), ("P3", "cherry", "Arhus"), ("P4", "Äpfel", "Århus"),
    ("P5", "apple", "Zürich"), ("P6", "STRASSE", "Orebro"), ("P7", "straße", "Örebro"), ("P8", "Éclair", "eclair"),
    ("P9", "eclair", nil),
].map { TestAirport(icao: $0.0, name: $0.1, city: $0.2, country: "XX") }

extension StoreConformance {
    static let sortingCases: [ConformanceCase] = [
        ConformanceCase("text orders by folded text, ignoring case or case and diacritics, the same on every store") {
            (store: any Store) async throws in
            let rows = store.repository(TestAirport.self)
            try await rows.insert(people)
            func order(_ matching: TextMatching) -> [String] {
                people.sorted {
                    let (a, b) = (matching.apply($0.name), matching.apply($1.name))
                    return a == b ? $0.icao < $1.icao : a.utf8.lexicographicallyPrecedes(b.utf8)
                }.map(\.icao)
            }
            let folded = try await rows.fetch(orderBy: [.ascending(\.name, .caseInsensitive)]).map(\.icao)
            #expect(folded == order(.caseInsensitive))
            #expect(folded.prefix(2) == ["P2", "P5"], "Apple and apple fold alike: the key breaks the tie")
            let plain = try await rows.fetch(orderBy: [.ascending(\.name, .caseAndDiacriticInsensitive)]).map(\.icao)
            #expect(plain == order(.caseAndDiacriticInsensitive))
            #expect(plain.prefix(3) == ["P2", "P4", "P5"] || plain.prefix(3) == ["P4", "P2", "P5"])
            let descending = try await rows.fetch(orderBy: [.descending(\.name, .caseInsensitive)]).map(\.icao)
            let expectedDescending = people.sorted {
                let (a, b) = (TextMatching.caseInsensitive.apply($0.name), TextMatching.caseInsensitive.apply($1.name))
                return a == b ? $0.icao < $1.icao : b.utf8.lexicographicallyPrecedes(a.utf8)
            }.map(\.icao)
            #expect(descending == expectedDescending, "ties still broken by the key, ascending")
            #expect(descending.first == "P8", "\"éclair\" folds to bytes above \"äpfel\" and every ASCII letter")
            let cities = try await rows.fetch(orderBy: [.ascending(\.city, .caseAndDiacriticInsensitive)]).map(\.icao)
            #expect(cities.prefix(2) == ["P2", "P9"], "NULL first")
            #expect(Set(cities[2...3]) == ["P3", "P4"], "Arhus and Århus together")
            let last = try await rows.fetch(orderBy: [.descending(\.city, .caseInsensitive)]).map(\.icao)
            #expect(last.suffix(2) == ["P2", "P9"], "NULL last when descending")
        },
        ConformanceCase("filters that ignore diacritics: sao finds São, orebro finds Örebro, on every store") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(
                codes(try await airports.fetch(where: .contains(\.name, "sao", .caseAndDiacriticInsensitive)))
                    == ["SBSP"])
            #expect(try await airports.fetch(where: .contains(\.name, "sao", .caseInsensitive)).isEmpty)
            let rows = store.repository(TestAirport.self)
            try await rows.insert(people)
            #expect(
                Set(codes(try await rows.fetch(where: .hasPrefix(\.city, "orebro", .caseAndDiacriticInsensitive))))
                    == ["P6", "P7"])
            #expect(
                Set(codes(try await rows.fetch(where: .contains(\.name, "ECLAIR", .caseAndDiacriticInsensitive))))
                    == ["P8", "P9"])
        },
        ConformanceCase("sections group rows by a key, in the key's order, observed too") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let sections = try await airports.sections(by: \.country, orderBy: [.descending(\.elevation)])
            let sample = TestAirport.sample
            #expect(
                sections.map(\.key)
                    == Array(Set(sample.map(\.country))).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            for section in sections {
                #expect(
                    section.items.map(\.icao)
                        == sample.filter { $0.country == section.key }.sorted { $0.elevation > $1.elevation }.map(
                            \.icao))
            }
            let byCity = try await airports.sections(by: \.city)
            #expect(byCity.first?.key == nil, "NULL is a section of its own, first")
            var observed = airports.observeSections(by: \.country, where: \.country == "NO" || \.country == "PL")
                .makeAsyncIterator()
            #expect(try await observed.next()?.map(\.key) == ["NO", "PL"])
            try await airports.insert(TestAirport(icao: "ZZZZ", name: "New", country: "PL"))
            let next = try await observed.next()
            #expect(next?.last?.items.map(\.icao).contains("ZZZZ") == true)
        },
    ]
}
