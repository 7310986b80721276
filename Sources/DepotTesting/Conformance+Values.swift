import Depot
import Foundation
import Testing

extension StoreConformance {
    static let valueCases: [ConformanceCase] = [
        ConformanceCase("every attribute type round-trips exactly, extremes included") {
            (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            try await repository.insert(AllTypes.extremes)
            let stored = try await repository.fetchAll()
            #expect(stored.count == AllTypes.extremes.count)
            for (got, want) in zip(stored, AllTypes.extremes) {
                #expect(got == want)
                #expect(got.date.timeIntervalSinceReferenceDate == want.date.timeIntervalSinceReferenceDate)
                #expect(got.decimal.description == want.decimal.description)
                #expect(got.string.utf8.elementsEqual(want.string.utf8))
            }
        },
        ConformanceCase("dates are kept to the microsecond, the same on every store") {
            (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            var row = AllTypes.extremes[2]
            // 2023-11-14 22:13:20.000_000_4 UTC (via 1970) and 0.123_456_789 s after the reference date.
            row.date = Date(timeIntervalSince1970: 1_700_000_000.000_000_4)
            row.optionalDate = Date(timeIntervalSinceReferenceDate: 0.123_456_789)
            try await repository.insert(row)
            let stored = try #require(try await repository.find(3))
            #expect(stored.date == Date(microseconds: 721_692_800_000_000))
            #expect(stored.optionalDate == Date(microseconds: 123_457))
            #expect(stored.date == Date(microseconds: row.date.microseconds))
            #expect(
                try await repository.count(where: \.optionalDate == Date(timeIntervalSinceReferenceDate: 0.123_457))
                    == 1)
            #expect(try await repository.count(where: \.optionalDate > Date(microseconds: 123_456)) == 1)
        },
        ConformanceCase("decimal keeps 30 significant digits") { (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            try await repository.insert(AllTypes.extremes)
            let first = try #require(try await repository.find(1))
            #expect(first.decimal.description == "12345678901234567890.123456789")
            #expect(try await repository.count(where: \.decimal > Decimal(0)) == 1)
            #expect(try await repository.count(where: \.decimal < Decimal(0)) == 1)
        },
        ConformanceCase("canonically equivalent strings stay distinct, byte for byte") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            let composed = TestAirport(icao: "é", name: "composed", country: "XX")
            let decomposed = TestAirport(icao: "e\u{301}", name: "decomposed", country: "XX")
            try await airports.insert([composed, decomposed])
            #expect(try await airports.count() == 2)
            #expect(try await airports.find("é")?.name == "composed")
            #expect(try await airports.find("e\u{301}")?.name == "decomposed")
            #expect(try await airports.count(where: \.icao == "é") == 1)
        },
        ConformanceCase("optional columns store NULL and values") { (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            try await repository.insert(AllTypes.extremes)
            #expect(try await repository.count(where: \.optionalInt == nil) == 1)
            #expect(try await repository.count(where: \.optionalUUID != nil) == 1)
            #expect(try await repository.count(where: \.optionalSurface == Surface.grass) == 1)
            #expect(try await repository.count(where: \.surface == .gravel) == 1)
            #expect(try await repository.count(where: \.length == Feet(42)) == 1)
        },
        ConformanceCase("dates compare by instant, sub-millisecond parts included") { (store: any Store) async throws in
            let repository = store.repository(AllTypes.self)
            try await repository.insert(AllTypes.extremes)
            let cut = Date(timeIntervalSince1970: 1_700_000_000.000_2)
            #expect(codesOf(try await repository.fetch(where: \.date > cut)) == [1])
            #expect(codesOf(try await repository.fetch(orderBy: [.ascending(\.date)])) == [2, 3, 1])
        },
    ]
}

private func codesOf(_ rows: [AllTypes]) -> [Int] { rows.map(\.id) }
