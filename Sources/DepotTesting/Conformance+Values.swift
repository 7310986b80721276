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
        ConformanceCase("NaN is refused when written and when compared with, naming it; the batch writes nothing") {
            (store: any Store) async throws in
            let readings = store.repository(Reading.self)
            try await readings.insert([Reading(station: "a", sequence: 1, value: 1)])
            let write = await #expect(throws: DepotError.self) {
                try await readings.upsert([
                    Reading(station: "a", sequence: 2, value: 2), Reading(station: "b", sequence: 7, value: .nan),
                ])
            }
            #expect(write?.kind == .encodingFailed)
            #expect(write?.column == "value")
            #expect(write?.message.contains("row ('b', 7) holds NaN") == true, "\(write?.message ?? "")")
            let patch = await #expect(throws: DepotError.self) {
                try await readings.apply([Patch<Reading>(key: "a", 1).set(\.value, .nan)])
            }
            #expect(patch?.kind == .encodingFailed)
            #expect(try await readings.fetch().map(\.value) == [1])
            for filter: Filter<Reading> in [
                \.value == .nan, \.value != .nan, \.value > .nan, \.value <= .nan, .in(\.value, [1, .nan]),
                !(\.value < .nan) || \.station == "a",
            ] {
                let error = await #expect(throws: DepotError.self) { _ = try await readings.fetch(where: filter) }
                #expect(error?.kind == .invalidQuery)
                #expect(error?.message.contains("with NaN") == true, "\(error?.message ?? "")")
                await #expect(throws: DepotError.self) { _ = try await readings.count(where: filter) }
                await #expect(throws: DepotError.self) { _ = try await readings.remove(where: filter) }
            }
            #expect(try await readings.count() == 1)
        },
        ConformanceCase(
            "special doubles (±0, ±infinity, subnormals, extremes) store, compare and sort alike: a seeded property check"
        ) {
            (store: any Store) async throws in
            let specials: [Double] = [
                -.infinity, -.greatestFiniteMagnitude, -1e300, -1.5, -1, -.leastNormalMagnitude,
                -.leastNonzeroMagnitude, -0.0, 0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, 0.1, 1, 2.5,
                1e300, .greatestFiniteMagnitude, .infinity,
            ]
            var random = SplitMix64(state: 13)
            var rows: [Reading] = []
            for sequence in 0..<120 {
                let value: Double?
                if sequence % 11 == 0 {
                    value = nil
                } else if Bool.random(using: &random) {
                    value = specials[Int.random(in: specials.indices, using: &random)]
                } else {
                    value = Double.random(in: -1e6...1e6, using: &random)
                }
                rows.append(Reading(station: "s", sequence: sequence, value: value))
            }
            let readings = store.repository(Reading.self)
            try await readings.insert(rows)
            // −0.0 reads back as 0.0, with a positive sign, on every store.
            let stored = try await readings.fetch(orderBy: [.ascending(\.sequence)])
            #expect(stored.count == rows.count)
            for (row, back) in zip(rows, stored) {
                #expect(back.value == row.value, "row \(row.sequence)")
                if let value = back.value, value == 0 { #expect(value.sign == .plus, "row \(row.sequence)") }
            }
            // Each comparison against each needle matches exactly what IEEE says, NULLs never.
            for needle in specials + [Double.random(in: -1e6...1e6, using: &random)] {
                let cases: [(Filter<Reading>, (Double) -> Bool)] = [
                    (\.value == needle, { $0 == needle }), (\.value != needle, { $0 != needle }),
                    (\.value < needle, { $0 < needle }), (\.value <= needle, { $0 <= needle }),
                    (\.value > needle, { $0 > needle }), (\.value >= needle, { $0 >= needle }),
                    (.in(\.value, [needle, 1]), { $0 == needle || $0 == 1 }),
                ]
                for (filter, model) in cases {
                    let expected = rows.filter { $0.value.map(model) ?? false }.map(\.sequence)
                    let found = try await readings.fetch(where: filter, orderBy: [.ascending(\.sequence)])
                    #expect(found.map(\.sequence) == expected, "needle \(needle)")
                }
            }
            // Ascending: NULLs first, then by value; ties by key. Descending: the reverse of that.
            let model = rows.sorted { left, right in
                switch (left.value, right.value) {
                case (nil, nil): return left.sequence < right.sequence
                case (nil, _): return true
                case (_, nil): return false
                case (let l?, let r?): return l < r || (l == r && left.sequence < right.sequence)
                }
            }
            let ascending = try await readings.fetch(orderBy: [.ascending(\.value), .ascending(\.sequence)])
            #expect(ascending.map(\.sequence) == model.map(\.sequence))
            let descending = try await readings.fetch(orderBy: [.descending(\.value), .descending(\.sequence)])
            #expect(descending.map(\.sequence) == model.reversed().map(\.sequence))
        },
    ]
}

private func codesOf(_ rows: [AllTypes]) -> [Int] { rows.map(\.id) }
