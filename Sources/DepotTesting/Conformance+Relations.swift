import Depot
import Testing

extension StoreConformance {
    static let relationCases: [ConformanceCase] = [
        ConformanceCase("a relation declared wrongly fails every call with an error naming entity and relation") {
            (store: any Store) async throws in
            let orphans = store.repository(RelOrphanReference.self)
            let orphan = await #expect(throws: DepotError.self) {
                try await orphans.insert(RelOrphanReference(id: 1, country: "NO"))
            }
            #expect(orphan?.kind == .invalidSchema)
            #expect(orphan?.message.contains("Relations of RelOrphanReference") == true)
            #expect(orphan?.message.contains("relation RelOrphanReference.country") == true)
            #expect(orphan?.message.contains("RelCountry lists no ToMany or ManyToMany through it") == true)
            let mistyped = await #expect(throws: DepotError.self) {
                _ = try await store.repository(RelMistypedReference.self).remove(where: .all)
            }
            #expect(mistyped?.message.contains("column 'airport' is integer but RelAirport.icao is text") == true)
            #expect(mistyped?.message.contains("onDelete: .nullify needs an optional key column") == true)
            #expect(try await orphans.count() == 0)
        },
        ConformanceCase(
            "a write whose key names no stored parent fails, naming row, column and value, and writes nothing"
        ) {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = store.repository(RelAirport.self)
            let fine = RelAirport(icao: "EKCH", name: "Copenhagen", country: "NO")
            let dangling = RelAirport(icao: "EDDF", name: "Frankfurt", country: "DE")
            let error = await #expect(throws: DepotError.self) { try await airports.insert([fine, dangling]) }
            #expect(error?.kind == .constraintViolation)
            #expect(
                error?.message
                    == "rel_airports row 'EDDF': country 'DE' names no RelCountry (relation RelAirport.country)")
            #expect(error?.column == "country")
            #expect(try await airports.find("EKCH") == nil)
            // A partial update moving a row to a missing parent fails the same way.
            let patch = await #expect(throws: DepotError.self) {
                try await store.repository(RelPilot.self).upsert(RelPilot(id: 3, name: "Cy", base: "ZZZZ"))
            }
            #expect(patch?.message.contains("base 'ZZZZ' names no RelAirport") == true)
            // NULL keys reference nothing and are fine; a row may reference a row of its own batch.
            try await store.repository(RelPilot.self).upsert(RelPilot(id: 5, name: "Ed", base: nil))
            try await store.repository(RelEmployee.self).insert([
                RelEmployee(id: 2, manager: 1), RelEmployee(id: 1, manager: nil),
            ])
            #expect(try await store.repository(RelEmployee.self).count() == 2)
        },
        ConformanceCase("including a to-many loads each parent's rows, filtered, sorted and limited per parent") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let countries = try await store.repository(RelCountry.self).fetch(
                orderBy: [.ascending(\.code)], including: [RelCountry.airports])
            #expect(countries.map(\.code) == ["AQ", "IS", "NO", "US"])
            for country in countries {
                let expected = RelationSample.airports.filter { $0.country == country.code }.map(\.icao).sorted()
                #expect(try country[RelCountry.airports].map(\.icao) == expected, "airports of \(country.code)")
            }
            let top = try await store.repository(RelCountry.self).fetch(
                where: \.continent != "AN",
                including: [RelCountry.airports.filter(\.kind != "small").sorted(by: .descending(\.elevation)).limit(2)]
            )
            for country in top {
                let expected = RelationSample.airports.filter { $0.country == country.code && $0.kind != "small" }
                    .sorted { $0.elevation > $1.elevation }.prefix(2).map(\.icao)
                #expect(try country[RelCountry.airports].map(\.icao) == Array(expected), "top of \(country.code)")
            }
            // Ordered to-many: runways come in position order, not key order.
            let denver = try await store.repository(RelAirport.self).fetch(
                where: \.icao == "KDEN", including: [RelAirport.runways])
            #expect(try denver.first?[RelAirport.runways].map(\.id) == [5, 6, 4])
        },
        ConformanceCase("including a to-one and nested relations loads every level with one query per level") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = try await store.repository(RelAirport.self).fetch(
                where: \.kind == "large", including: [RelAirport.country, RelAirport.runways])
            #expect(airports.map(\.icao) == ["BIKF", "ENGM", "KDEN", "KJFK"])
            for airport in airports {
                let country = RelationSample.countries.first { $0.code == airport.country }
                #expect(try airport[RelAirport.country]?.entity == country)
                let runways = RelationSample.runways.filter { $0.airport == airport.icao }
                    .sorted { $0.position < $1.position }
                #expect(try airport[RelAirport.runways].map(\.entity) == runways)
            }
            let counting = CountingStore(store)
            let nested = try await counting.repository(RelCountry.self).fetch(
                where: \.continent == "EU",
                including: [
                    RelCountry.airports.including(RelAirport.runways, RelAirport.pilots.sorted(by: .ascending(\.name)))
                ])
            #expect(counting.fetchCount == 4, "countries, airports, runways, pilots: one query each")
            let norway = nested.first { $0.code == "NO" }
            let oslo = try norway?[RelCountry.airports].first { $0.icao == "ENGM" }
            #expect(try oslo?[RelAirport.runways].map(\.id) == [2, 1])
            #expect(try oslo?[RelAirport.pilots].map(\.name) == ["Ada", "Di"])
            #expect(try norway?[RelCountry.airports].first { $0.icao == "ENSB" }?[RelAirport.pilots].isEmpty == true)
            let twice = await #expect(throws: DepotError.self) {
                try await store.repository(RelCountry.self).fetch(
                    including: [RelCountry.airports, RelCountry.airports.limit(1)])
            }
            #expect(
                twice?.message == "the fetch of RelCountry includes one relation twice: give each relation one include")
        },
        ConformanceCase("including a many-to-many goes through the join rows, with a filter and a limit") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let alliances = try await store.repository(RelAlliance.self).fetch(
                including: [RelAlliance.airports.sorted(by: .descending(\.elevation))])
            #expect(alliances.map(\.code) == ["E", "H", "N"])
            for alliance in alliances {
                let members = Set(RelationSample.memberships.filter { $0.alliance == alliance.code }.map(\.airport))
                let expected = RelationSample.airports.filter { members.contains($0.icao) }
                    .sorted { $0.elevation > $1.elevation }.map(\.icao)
                #expect(try alliance[RelAlliance.airports].map(\.icao) == expected, "members of \(alliance.code)")
            }
            let limited = try await store.repository(RelAirport.self).fetch(
                where: \.icao == "ENGM",
                including: [RelAirport.alliances.filter(\.name != "Empty").sorted(by: .ascending(\.name)).limit(1)])
            #expect(try limited.first?[RelAirport.alliances].map(\.code) == ["H"])
        },
        ConformanceCase("predicates across relations run in the store: to-one match, to-many and many-to-many any/none")
        {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = store.repository(RelAirport.self)
            let european = try await airports.fetch(where: RelAirport.country.matches(\.continent == "EU"))
            let euCodes = Set(RelationSample.countries.filter { $0.continent == "EU" }.map(\.code))
            #expect(
                european.map(\.icao)
                    == RelationSample.airports.filter { euCodes.contains($0.country) }.map(\.icao).sorted())
            let countries = store.repository(RelCountry.self)
            let withLarge = try await countries.fetch(where: RelCountry.airports.any(\.kind == "large"))
            #expect(withLarge.map(\.code) == ["IS", "NO", "US"])
            let withoutAirports = try await countries.fetch(where: RelCountry.airports.none())
            #expect(withoutAirports.map(\.code) == ["AQ"])
            #expect(
                try await countries.count(where: RelCountry.airports.none(\.elevation > 1000) && \.continent == "EU")
                    == 2)
            let nordic = try await airports.fetch(where: RelAirport.alliances.any(\.name == "Nordic"))
            #expect(nordic.map(\.icao) == ["BIKF", "ENBR", "ENGM"])
            let unaligned = try await airports.fetch(where: RelAirport.alliances.none())
            #expect(unaligned.map(\.icao) == ["ENSB", "KXXX"])
            // Two levels: countries with an airport that has a runway longer than 4,500 m.
            let long = try await countries.fetch(
                where: RelCountry.airports.any(RelAirport.runways.any(\.length > 4500)))
            #expect(long.map(\.code) == ["US"])
        },
        ConformanceCase("delete rules: cascade through levels, nullify, deny naming the rows, and noAction") {
            (store: any Store) async throws in
            try await store.seededRelations()
            // Removing Norway cascades to its airports, their runways and memberships; pilots lose their base.
            #expect(try await store.repository(RelCountry.self).remove("NO"))
            #expect(
                try await store.repository(RelAirport.self).fetch().map(\.icao) == ["BIKF", "KDEN", "KJFK", "KXXX"])
            #expect(try await store.repository(RelRunway.self).fetch().map(\.id) == [4, 5, 6, 7])
            #expect(try await store.repository(RelMembership.self).count(where: \.alliance == "N") == 1)
            let pilots = try await store.repository(RelPilot.self).fetch()
            #expect(pilots.map(\.base) == [nil, nil, nil, nil])
            #expect(pilots.map(\.name) == ["Ada", "Bo", "Cy", "Di"])
            // Deny: an alliance with members cannot go, and nothing of the batch is removed.
            let alliances = store.repository(RelAlliance.self)
            let error = await #expect(throws: DepotError.self) { try await alliances.remove(where: .all) }
            #expect(error?.kind == .constraintViolation)
            #expect(
                error?.message
                    == "cannot remove RelAlliance rows: 3 RelMembership row(s) reference them through "
                    + "RelMembership.alliance (onDelete: .deny): ('BIKF', 'N'), ('KDEN', 'H'), ('KJFK', 'H')")
            #expect(try await alliances.count() == 3)
            #expect(try await alliances.remove("E"))
            // Removing the members first lets the alliance go.
            #expect(try await store.repository(RelMembership.self).remove(where: \.alliance == "N") == 1)
            #expect(try await alliances.remove("N"))
        },
        ConformanceCase("a cascade over a relation of a table to itself ends, even on a cycle") {
            (store: any Store) async throws in
            let employees = store.repository(RelEmployee.self)
            try await employees.insert([
                RelEmployee(id: 1, manager: nil), RelEmployee(id: 2, manager: 1), RelEmployee(id: 3, manager: 2),
                RelEmployee(id: 4, manager: 2), RelEmployee(id: 5, manager: nil), RelEmployee(id: 6, manager: 7),
                RelEmployee(id: 7, manager: 6),
            ])
            #expect(try await employees.remove(2))
            #expect(try await employees.fetch().map(\.id) == [1, 5, 6, 7])
            #expect(try await employees.remove(6))
            #expect(try await employees.fetch().map(\.id) == [1, 5])
        },
        ConformanceCase("replace(where:with:) applies delete rules only to the rows that go") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = store.repository(RelAirport.self)
            var oslo = RelationSample.airports[0]
            oslo.name = "Oslo Gardermoen"
            try await airports.replace(where: \.country == "NO", with: [oslo])
            #expect(try await airports.fetch(where: \.country == "NO").map(\.name) == ["Oslo Gardermoen"])
            #expect(try await store.repository(RelRunway.self).fetch(where: \.airport == "ENGM").count == 2)
            #expect(try await store.repository(RelRunway.self).count(where: \.airport == "ENBR") == 0)
        },
        ConformanceCase("an include of 100,000 parents binds their keys as one value and stitches every child") {
            (store: any Store) async throws in
            try await store.repository(RelCountry.self).insert(RelationSample.countries)
            let count = 100_000
            let many = (0..<count).map { RelAirport(icao: "A\($0)", name: "Field \($0)", country: "US") }
            try await store.repository(RelAirport.self).insert(many)
            let runways = (0..<count).filter { $0 % 7 == 0 }.map {
                RelRunway(id: $0, airport: "A\($0)", length: $0, position: 1)
            }
            try await store.repository(RelRunway.self).insert(runways)
            let loaded = try await store.repository(RelAirport.self).fetch(including: [RelAirport.runways])
            #expect(loaded.count == count)
            let stitched = try loaded.filter { try !$0[RelAirport.runways].isEmpty }
            #expect(stitched.count == runways.count)
            #expect(try stitched.allSatisfy { try $0[RelAirport.runways].map(\.airport) == [$0.icao] })
            #expect(try await store.repository(RelCountry.self).count(where: RelCountry.airports.any()) == 1)
        },
        ConformanceCase("moving a row of an ordered relation rewrites that row only, and the order round-trips") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let runways = store.repository(RelRunway.self)
            func order() async throws -> [Int] {
                try await store.repository(RelAirport.self).fetch(
                    where: \.icao == "KDEN", including: [RelAirport.runways]
                )
                .first?[RelAirport.runways].map(\.id) ?? []
            }
            #expect(try await order() == [5, 6, 4])
            try await runways.move(4, in: RelAirport.runways, to: 0)
            #expect(try await order() == [4, 5, 6])
            #expect(try await runways.find(5)?.position == 1, "the other rows keep their positions")
            #expect(try await runways.find(6)?.position == 2)
            try await runways.move(4, in: RelAirport.runways, to: 99)
            #expect(try await order() == [5, 6, 4])
            // Sixty moves into the same gap exhaust a Double's halvings: the siblings get renumbered once.
            for _ in 0..<60 {
                try await runways.move(6, in: RelAirport.runways, to: 1)
                try await runways.move(4, in: RelAirport.runways, to: 1)
            }
            #expect(try await order() == [5, 4, 6])
            #expect(try await runways.find(7)?.position == 1, "rows of other parents are untouched")
            #expect(try await runways.nextPosition(in: RelAirport.runways, parent: "ENBR") == 2)
            let error = await #expect(throws: DepotError.self) {
                try await store.repository(RelPilot.self).move(1, in: RelAirport.pilots, to: 0)
            }
            #expect(error?.message == "RelAirport.rel_pilots is not ordered: declare it with orderedBy:")
        },
        ConformanceCase("saving a parent with its children stores both at once; replaced children follow the rule") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = store.repository(RelAirport.self)
            var oslo = RelationSample.airports[0]
            oslo.name = "Oslo Gardermoen"
            let fresh = [
                RelRunway(id: 10, airport: "????", length: 1000, position: 0),
                RelRunway(id: 1, airport: "ENGM", length: 3600, position: 0),
            ]
            try await airports.save(oslo, with: fresh, in: RelAirport.runways)
            let saved = try await airports.fetch(where: \.icao == "ENGM", including: [RelAirport.runways])
            #expect(saved.first?.name == "Oslo Gardermoen")
            #expect(
                try saved.first?[RelAirport.runways].map(\.entity) == [
                    RelRunway(id: 10, airport: "ENGM", length: 1000, position: 1),
                    RelRunway(id: 1, airport: "ENGM", length: 3600, position: 2),
                ])
            #expect(try await store.repository(RelRunway.self).find(2) == nil, "a replaced child is removed")
            try await airports.save(
                oslo, with: [RelPilot(id: 2, name: "Bo", base: nil)], in: RelAirport.pilots, replaced: .detach)
            let pilots = try await store.repository(RelPilot.self).fetch()
            #expect(pilots.map(\.base) == [nil, "ENGM", nil, nil])
            let bergen = RelationSample.airports[1]
            try await airports.save(
                bergen, with: [RelPilot(id: 9, name: "Ny", base: nil)], in: RelAirport.pilots, replaced: .keep)
            #expect(try await store.repository(RelPilot.self).count(where: \.base == "ENBR") == 1)
            let refused = await #expect(throws: DepotError.self) {
                try await airports.save(bergen, with: [RelRunway](), in: RelAirport.runways, replaced: .detach)
            }
            #expect(refused?.message.contains("needs an optional key") == true)
            #expect(try await store.repository(RelRunway.self).count(where: \.airport == "ENBR") == 1)
        },
        ConformanceCase("an observed query with includes re-emits when an included table changes, and only then") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let counting = CountingStore(store)
            let countries = counting.repository(RelCountry.self)
            var iterator = countries.observe(where: \.continent == "EU", including: [RelCountry.airports])
                .makeAsyncIterator()
            let first = try await iterator.next()
            #expect(try first?.map { try $0[RelCountry.airports].count } == [1, 3])
            let fetchesBefore = counting.fetchCount
            try await counting.repository(RelPilot.self).upsert(RelPilot(id: 8, name: "Hal", base: nil))
            // A pilot is in no table the observation reads: its next element waits for the airport.
            let pending = Task { [iterator] in
                var iterator = iterator
                return try await iterator.next()
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(counting.fetchCount == fetchesBefore, "the pilot write re-ran nothing")
            try await counting.repository(RelAirport.self).upsert(
                RelAirport(icao: "BIRK", name: "Reykjavik", country: "IS", kind: "medium", elevation: 48))
            let second = try await pending.value
            let codes = try second?.map { try $0[RelCountry.airports].map(\.icao) }
            #expect(codes == [["BIKF", "BIRK"], ["ENBR", "ENGM", "ENSB"]])
        },
        ConformanceCase("an observed query with includes delivers no result identical to the last one") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let counting = CountingStore(store)
            let airports = counting.repository(RelAirport.self)
            var iterator = counting.repository(RelCountry.self)
                .observe(where: \.continent == "EU", including: [RelCountry.airports.including(RelAirport.runways)])
                .makeAsyncIterator()
            func shown(_ result: [Loaded<RelCountry>]) throws -> [String] {
                try result.flatMap { country in
                    try country[RelCountry.airports].map { airport in
                        "\(country.code) \(airport.name) \(try airport[RelAirport.runways].map(\.length))"
                    }
                }
            }
            #expect(
                try shown(try #require(await iterator.next(), "the observation ended before its first result"))
                    == ["IS Keflavik []", "NO Bergen [2990]", "NO Oslo [2950, 3600]", "NO Svalbard []"])
            let pending = Task { [iterator] in
                var iterator = iterator
                return try await iterator.next()
            }
            // Writes to tables it reads, to rows outside its result: each re-runs the query (the
            // fetch count moves), and none is delivered.
            var fetched = counting.fetchCount
            try await airports.upsert(RelAirport(icao: "KLAX", name: "Los Angeles", country: "US", kind: "large"))
            #expect(await eventually { counting.fetchCount > fetched }, "a write to an included table re-runs it")
            fetched = counting.fetchCount
            let runways = counting.repository(RelRunway.self)
            try await runways.upsert(RelRunway(id: 9, airport: "KJFK", length: 3000, position: 2))
            #expect(await eventually { counting.fetchCount > fetched }, "a nested include's table re-runs it")
            // The first change it shows is the next element.
            try await runways.upsert(RelRunway(id: 10, airport: "ENSB", length: 2483, position: 1))
            #expect(
                try shown(try #require(await pending.value, "the observation ended before the change"))
                    == ["IS Keflavik []", "NO Bergen [2990]", "NO Oslo [2950, 3600]", "NO Svalbard [2483]"])
            // A to-one include: a write to another country's row is not delivered, one to the
            // included country is.
            var icelandic = airports.observe(where: \.country == "IS", including: [RelAirport.country])
                .makeAsyncIterator()
            func countries(_ result: [Loaded<RelAirport>]) throws -> [String] {
                try result.map { "\($0.icao) \(try $0[RelAirport.country]?.name ?? "none")" }
            }
            let first = try #require(await icelandic.next(), "the observation ended before its first result")
            #expect(try countries(first) == ["BIKF Iceland"])
            let countriesRepository = counting.repository(RelCountry.self)
            let next = Task { [icelandic] in
                var icelandic = icelandic
                return try await icelandic.next()
            }
            fetched = counting.fetchCount
            try await countriesRepository.upsert(RelCountry(code: "US", name: "USA", continent: "NA"))
            #expect(await eventually { counting.fetchCount > fetched }, "a to-one include's table re-runs it")
            try await countriesRepository.upsert(RelCountry(code: "IS", name: "Island", continent: "EU"))
            #expect(try countries(try #require(await next.value, "the observation ended")) == ["BIKF Island"])
        },
        ConformanceCase("saving an entity with the row it refers to, and sources with children through a mapper") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let airports = store.repository(RelAirport.self)
            let newCountry = RelCountry(code: "DK", name: "Denmark", continent: "EU")
            try await airports.save(
                RelAirport(icao: "EKCH", name: "Copenhagen", country: "??", kind: "large", elevation: 17),
                with: newCountry, in: RelAirport.country)
            #expect(try await airports.find("EKCH")?.country == "DK")
            #expect(try await store.repository(RelCountry.self).find("DK") == newCountry)
            struct Incoming: Sendable {
                var icao: String
                var name: String
                var runways: [Int]
            }
            struct IncomingMapper: PersistMapper {
                struct Unnamed: Error {}
                func entity(from source: Incoming) throws -> RelAirport {
                    guard !source.name.isEmpty else { throw Unnamed() }
                    return RelAirport(icao: source.icao, name: source.name, country: "DK")
                }
            }
            let incoming = [
                Incoming(icao: "EKBI", name: "Billund", runways: [3100]),
                Incoming(icao: "EKCH", name: "Kastrup", runways: [3600, 3300, 2800]),
            ]
            try await airports.persist(
                incoming, by: IncomingMapper(),
                children: { source in
                    source.runways.enumerated().map { index, length in
                        RelRunway(id: 100 * length + index, airport: source.icao, length: length, position: 0)
                    }
                }, in: RelAirport.runways)
            let saved = try await airports.fetch(where: \.country == "DK", including: [RelAirport.runways])
            #expect(saved.map(\.name) == ["Billund", "Kastrup"])
            #expect(try saved.map { try $0[RelAirport.runways].map(\.length) } == [[3100], [3600, 3300, 2800]])
            // A source that does not map fails the whole call before anything is written.
            await #expect(throws: IncomingMapper.Unnamed.self) {
                try await airports.persist(
                    [
                        Incoming(icao: "EKYT", name: "Aalborg", runways: [2600]),
                        Incoming(icao: "EKXX", name: "", runways: []),
                    ], by: IncomingMapper(), children: { _ in [] }, in: RelAirport.runways)
            }
            #expect(try await airports.find("EKYT") == nil)
        },
        ConformanceCase("an observed query across a relation re-emits when the related table changes") {
            (store: any Store) async throws in
            try await store.seededRelations()
            let countries = store.repository(RelCountry.self)
            var iterator = countries.observe(where: RelCountry.airports.any(\.kind == "large")).makeAsyncIterator()
            #expect(try await iterator.next()?.map(\.code) == ["IS", "NO", "US"])
            try await store.repository(RelAirport.self).upsert(
                RelAirport(icao: "BIKF", name: "Keflavik", country: "IS", kind: "medium", elevation: 171))
            #expect(try await iterator.next()?.map(\.code) == ["NO", "US"])
        },
    ]
}
