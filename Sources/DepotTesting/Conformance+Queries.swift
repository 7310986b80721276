import Depot
import Foundation
import Testing

extension StoreConformance {
    static let queryCases: [ConformanceCase] = [
        ConformanceCase("text operators compare every byte, U+0000 included, where a store can hold it") {
            (store: any Store) async throws in
            let names = ["a\u{0}b", "\u{0}", "x\u{0}", "ab", "b", "", "\u{0}\u{0}b", "e\u{301}", "é\u{0}é"]
            let rows = names.enumerated().map { index, name in
                TestAirport(icao: "N\(index)", name: name, country: "ZZ", latitude: 0, longitude: 0)
            }
            let airports = store.repository(TestAirport.self)
            do {
                try await airports.insert(rows)
            } catch let error as DepotError where error.kind == .constraintViolation {
                // PostgreSQL text cannot hold U+0000: the store says so, naming the column.
                #expect(error.column == "name", "\(error)")
                return
            }
            let needles = ["b", "\u{0}b", "\u{0}", "a\u{0}", "", "\u{301}", "é", "\u{0}é", "ab"]
            for needle in needles {
                func expected(_ test: (String) -> Bool) -> Set<String> {
                    Set(rows.filter { test($0.name) }.map(\.icao))
                }
                let bytes = { (text: String) in Array(text.utf8) }
                let suffix = expected { bytes($0).reversed().starts(with: bytes(needle).reversed()) }
                let prefix = expected { bytes($0).starts(with: bytes(needle)) }
                let contains = expected { text in
                    let haystack = bytes(text)
                    let pin = bytes(needle)
                    return pin.isEmpty
                        || (0...max(0, haystack.count - pin.count)).contains {
                            haystack.count >= pin.count && Array(haystack[$0..<$0 + pin.count]) == pin
                        }
                }
                let escaped = needle.unicodeScalars.map { "U+\(String($0.value, radix: 16))" }.joined(separator: " ")
                #expect(
                    Set(try await airports.fetch(where: .hasSuffix(\.name, needle)).map(\.icao)) == suffix,
                    "hasSuffix [\(escaped)]")
                #expect(
                    Set(try await airports.fetch(where: .hasPrefix(\.name, needle)).map(\.icao)) == prefix,
                    "hasPrefix [\(escaped)]")
                #expect(
                    Set(try await airports.fetch(where: .contains(\.name, needle)).map(\.icao)) == contains,
                    "contains [\(escaped)]")
            }
        },
        ConformanceCase("batches walk every matching row once, in key order, also over a composite key") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            var walked: [TestAirport] = []
            for try await batch in airports.batches(of: 3) {
                #expect(batch.count <= 3)
                walked += batch
            }
            #expect(walked == (try await airports.fetchAll()))
            var norwegian: [String] = []
            for try await batch in airports.batches(of: 2, where: \.country == "NO") { norwegian += codes(batch) }
            #expect(norwegian == expectedCodes { $0.country == "NO" })
            let readings = store.repository(Reading.self)
            let stored = (0..<23).map {
                Reading(station: ["B", "A", "C"][$0 % 3], sequence: $0 / 3, value: Double($0))
            }
            try await readings.insert(stored)
            var seen: [Reading] = []
            for try await batch in readings.batches(of: 4) { seen += batch }
            #expect(seen == (try await readings.fetchAll()))
            #expect(seen.count == 23)
            let error = await #expect(throws: DepotError.self) {
                for try await _ in readings.batches(of: 0) {}
            }
            #expect(error?.message == "batches of Reading must hold at least one row (got 0)")
        },
        ConformanceCase("comparison operators on numbers and text") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(codes(try await airports.fetch(where: \.elevation > 1000)) == expectedCodes { $0.elevation > 1000 })
            #expect(codes(try await airports.fetch(where: \.elevation >= 681)) == expectedCodes { $0.elevation >= 681 })
            #expect(codes(try await airports.fetch(where: \.elevation < 0)) == ["EDXS"])
            #expect(codes(try await airports.fetch(where: \.elevation <= 8)) == ["BIIS", "EDXS"])
            #expect(try await airports.count(where: \.country != "NO") == 6)
            #expect(
                codes(try await airports.fetch(where: \.icao > "EN" && \.icao < "EO")) == [
                    "ENAL", "ENBR", "ENGM", "ENZZ",
                ])
            #expect(try await airports.count(where: \.country == "NO" || \.country == "PL") == 5)
            #expect(try await airports.count(where: !(\.country == "NO")) == 6)
            #expect(try await airports.count(where: .all) == 10)
            #expect(try await airports.count(where: .nothing) == 0)
        },
        ConformanceCase("text compares in byte order: uppercase, lowercase, then non-ASCII") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            let names = ["b", "B", "a", "Å", "Z", "é", "e\u{301}", "z"]
            try await airports.insert(
                names.enumerated().map { TestAirport(icao: "K\($0.offset)", name: $0.element, country: "X") })
            let sorted = try await airports.fetch(orderBy: [.ascending(\.name)]).map(\.name)
            #expect(sorted == ["B", "Z", "a", "b", "e\u{301}", "z", "Å", "é"])
            #expect(try await airports.count(where: \.name > "Z") == 6)
        },
        ConformanceCase("NULL follows three-valued logic") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let withCode = TestAirport.sample.filter { $0.iata != nil }.count
            #expect(try await airports.count(where: \.iata == nil) == 2)
            #expect(try await airports.count(where: \.iata != nil) == withCode)
            #expect(try await airports.count(where: \.iata == "OSL") == 1)
            #expect(try await airports.count(where: \.iata != "OSL") == withCode - 1)
            #expect(try await airports.count(where: !(\.iata == "OSL")) == withCode - 1)
            #expect(try await airports.count(where: \.iata == "OSL" || \.iata != "OSL") == withCode)
            #expect(try await airports.count(where: !(\.iata == "OSL" && \.country == "NO")) == 10 - 1 - 1)
            #expect(try await airports.count(where: \.iata > "A") == withCode)
            let none: String? = nil
            #expect(try await airports.count(where: \.iata == none) == 2)
        },
        ConformanceCase("membership in a collection, empty and optional") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(codes(try await airports.fetch(where: .in(\.country, ["PL", "IS", "XX"]))) == ["BIIS", "EPPO"])
            #expect(try await airports.count(where: .in(\.country, [String]())) == 0)
            #expect(try await airports.count(where: !.in(\.country, [String]())) == 10)
            #expect(try await airports.count(where: .in(\.iata, ["OSL", "BGO"])) == 2)
            #expect(try await airports.count(where: !.in(\.iata, ["OSL", "BGO"])) == 6)
        },
        ConformanceCase("membership in 40,000 values (beyond engines' parameter limits) works and agrees") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let many = (0..<40_000).map { "X\($0)" } + ["ENGM", "KDEN", "quote\"back\\slash", "Ål"]
            #expect(codes(try await airports.fetch(where: .in(\.icao, many))) == ["ENGM", "KDEN"])
            #expect(try await airports.count(where: !.in(\.icao, many)) == 8)
            let readings = store.repository(Reading.self)
            try await readings.insert((0..<300).map { Reading(station: "s", sequence: $0, value: nil) })
            #expect(try await readings.count(where: .in(\.sequence, Array(stride(from: 0, to: 50_000, by: 2)))) == 150)
        },
        ConformanceCase("text operators are case-sensitive and treat % and _ literally") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(codes(try await airports.fetch(where: .contains(\.name, "Airport Vigra"))) == ["ENAL"])
            #expect(try await airports.count(where: .contains(\.name, "airport")) == 0)
            #expect(codes(try await airports.fetch(where: .hasPrefix(\.name, "Oslo"))) == ["ENGM"])
            #expect(codes(try await airports.fetch(where: .hasSuffix(\.name, "Flesland"))) == ["ENBR"])
            #expect(codes(try await airports.fetch(where: .contains(\.name, "100%_"))) == ["EDXS"])
            #expect(try await airports.count(where: .contains(\.name, "1%0")) == 0)
            #expect(try await airports.count(where: .contains(\.name, "_")) == 1)
            #expect(try await airports.count(where: .hasPrefix(\.name, "%")) == 0)
            #expect(try await airports.count(where: .contains(\.name, "")) == 10)
            #expect(try await airports.count(where: .contains(\.city, "")) == 9)
            #expect(codes(try await airports.fetch(where: .hasSuffix(\.city, "ń"))) == ["EPPO"])
        },
        ConformanceCase("case-insensitive text operators fold full Unicode, the same everywhere") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(codes(try await airports.fetch(where: .contains(\.name, "são", .caseInsensitive))) == ["SBSP"])
            #expect(
                codes(try await airports.fetch(where: .contains(\.name, "AIRPORT VIGRA", .caseInsensitive))) == ["ENAL"]
            )
            #expect(codes(try await airports.fetch(where: .contains(\.city, "STRASSE", .caseInsensitive))) == ["EDXS"])
            #expect(codes(try await airports.fetch(where: .hasPrefix(\.name, "ÍSAF", .caseInsensitive))) == ["BIIS"])
            #expect(codes(try await airports.fetch(where: .hasPrefix(\.city, "ålesund", .caseInsensitive))) == ["ENAL"])
            #expect(codes(try await airports.fetch(where: .hasSuffix(\.city, "POZNAŃ", .caseInsensitive))) == ["EPPO"])
            #expect(
                codes(try await airports.fetch(where: .contains(\.name, "sa\u{303}o", .caseInsensitive))) == ["SBSP"])
            #expect(try await airports.count(where: .contains(\.name, "100%_OFF", .caseInsensitive)) == 1)
            #expect(try await airports.count(where: .contains(\.name, "%", .caseInsensitive)) == 1)
            #expect(try await airports.count(where: .contains(\.name, "airport", .caseInsensitive)) == 7)
        },
        ConformanceCase("ordering by several keys; NULL first ascending, last descending; key breaks ties") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let byCountry = try await airports.fetch(orderBy: [.ascending(\.country), .descending(\.elevation)])
            #expect(
                codes(byCountry) == ["SBSP", "EDDM", "EDXS", "BIIS", "ENGM", "ENBR", "ENAL", "ENZZ", "EPPO", "KDEN"])
            let byCode = try await airports.fetch(orderBy: [.ascending(\.iata)])
            #expect(codes(byCode).prefix(2) == ["EDXS", "ENZZ"])
            #expect(
                byCode.dropFirst(2).map { $0.iata ?? "" } == ["AES", "BGO", "CGH", "DEN", "IFJ", "MUC", "OSL", "POZ"])
            let descending = try await airports.fetch(orderBy: [.descending(\.iata)])
            #expect(codes(descending).suffix(2) == ["EDXS", "ENZZ"])
            #expect(codes(try await airports.fetch(orderBy: [.descending(\.country)], limit: 2)) == ["KDEN", "EPPO"])
        },
        ConformanceCase("limit and offset page through a total order") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let all = codes(try await airports.fetch(orderBy: [.ascending(\.country)]))
            var paged: [String] = []
            for page in 0..<4 {
                paged += codes(try await airports.fetch(orderBy: [.ascending(\.country)], limit: 3, offset: page * 3))
            }
            #expect(paged == all)
            #expect(try await airports.fetch(limit: 0).isEmpty)
            #expect(try await airports.fetch(offset: 100).isEmpty)
            #expect(codes(try await airports.fetch(offset: 8)) == ["KDEN", "SBSP"])
            #expect(try await airports.first(orderBy: [.descending(\.elevation)])?.icao == "KDEN")
            let error = await #expect(throws: DepotError.self) { _ = try await airports.fetch(limit: -1) }
            #expect(error?.kind == .invalidQuery)
        },
        ConformanceCase("nearest orders by haversine distance inside the store") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let point = Coordinate(latitude: 59.91, longitude: 10.75)
            let nearest = try await airports.fetch(
                orderBy: [.nearest(to: point, latitude: \.latitude, longitude: \.longitude)], limit: 4)
            let expected = TestAirport.sample.sorted {
                GeoDistance.haversineKilometers(point, Coordinate(latitude: $0.latitude, longitude: $0.longitude))
                    < GeoDistance.haversineKilometers(point, Coordinate(latitude: $1.latitude, longitude: $1.longitude))
            }
            #expect(codes(nearest) == codes(Array(expected.prefix(4))))
            #expect(codes(nearest) == ["ENGM", "ENZZ", "ENBR", "ENAL"])
            let filtered = try await airports.fetch(
                where: \.country != "NO", orderBy: [.nearest(to: point, latitude: \.latitude, longitude: \.longitude)],
                limit: 2)
            #expect(codes(filtered) == ["EDXS", "EPPO"])
        },
        ConformanceCase("count honours the predicate only") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(try await airports.count() == 10)
            #expect(try await airports.count(where: \.country == "NO") == 4)
            #expect(try await airports.count(where: \.country == "NO" && \.elevation > 100) == 2)
        },
    ]
}
