import Depot
import DepotPostgres
import DepotSQLite
import DepotTestSupport
import DepotTesting
import Foundation
import Testing

/// The relation half of the three-store differential: random writes through relations (graph
/// saves, cascades, nullify, deny, references to rows that do not exist) and random queries with
/// includes (filtered, sorted, limited per parent, nested) and relation predicates, on the
/// in-memory, SQLite and PostgreSQL stores. Every write must end the same way and leave the same
/// rows; every query must give the same answer, in the same order.
@Suite(
    "Three stores agree on relations",
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct ThreeStoreRelationsAgreementTests {
    static let countries = ["NO", "SE", "DK", "IS", "FI", "EE", "US", "CA"]
    static let alliances = ["STAR", "ONE", "SKY"]

    /// A write applied to each store alike.
    struct Write: CustomStringConvertible {
        var description: String
        var apply: @Sendable (any Store) async throws -> Void
    }

    /// A query whose answer is rendered as text, to compare the stores' answers.
    struct Query: CustomStringConvertible {
        var description: String
        var answer: @Sendable (any Store) async throws -> String
    }

    @Test(
        "random writes through relations and 2,000 random queries with includes and relation predicates give the same answers on the in-memory, SQLite and PostgreSQL stores"
    )
    func relationsAgree() async throws {
        try await HeavyHarness.run {
            let seed = UInt64(ProcessInfo.processInfo.environment["DEPOT_AGREEMENT_SEED"] ?? "") ?? 2_026_112_5
            var random = SplitMix64(state: seed)
            try await PostgresTestServer.withStore { postgres in
                let stores: [(name: String, store: any Store)] = [
                    ("in-memory", InMemoryStore()), ("SQLite", try SQLiteStore.temporary()), ("PostgreSQL", postgres),
                ]
                var nextID = 1
                var queries = 0
                var outcomesSeen: [String: Int] = [:]
                for step in 0..<80 {
                    let write = Self.randomWrite(&random, nextID: &nextID, step: step)
                    var outcomes: [String] = []
                    for (_, store) in stores {
                        do {
                            try await write.apply(store)
                            outcomes.append("ok")
                        } catch let error as DepotError {
                            outcomes.append("\(error.kind)")
                        }
                    }
                    outcomesSeen[outcomes[0], default: 0] += 1
                    try #require(
                        Set(outcomes).count == 1,
                        "seed \(seed), step \(step): \(write) ended \(zip(stores.map(\.name), outcomes).map { "\($0): \($1)" })"
                    )
                    let contents = try await stores.asyncMap { try await Self.contents($0.store) }
                    try #require(
                        contents.allSatisfy { $0 == contents[0] },
                        "seed \(seed), step \(step): after \(write) the stores hold different rows:\n\(Self.byStore(stores, contents))"
                    )
                    for _ in 0..<25 {
                        queries += 1
                        let query = Self.randomQuery(&random)
                        let answers = try await stores.asyncMap { try await query.answer($0.store) }
                        try #require(
                            answers.allSatisfy { $0 == answers[0] },
                            "seed \(seed), step \(step), query \(queries): \(query)\n\(Self.byStore(stores, answers))")
                    }
                }
                #expect(queries == 2000)
                print("relations differential, seed \(seed): 80 writes (\(outcomesSeen)), \(queries) queries agreed")
                #expect(outcomesSeen.count > 1, "some writes were refused alike, some succeeded: \(outcomesSeen)")
            }
        }
    }

    /// Each store's name beside its text, one per line.
    static func byStore(_ stores: [(name: String, store: any Store)], _ texts: [String]) -> String {
        zip(stores.map(\.name), texts).map { "\($0): \($1)" }.joined(separator: "\n")
    }

    /// Every row of every table, as text.
    static func contents(_ store: any Store) async throws -> String {
        [
            "\(try await store.repository(RelCountry.self).fetchAll())",
            "\(try await store.repository(RelAirport.self).fetchAll())",
            "\(try await store.repository(RelRunway.self).fetchAll())",
            "\(try await store.repository(RelPilot.self).fetchAll())",
            "\(try await store.repository(RelAlliance.self).fetchAll())",
            "\(try await store.repository(RelMembership.self).fetchAll())",
        ].joined(separator: "\n")
    }

    static func randomWrite(_ random: inout SplitMix64, nextID: inout Int, step: Int) -> Write {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        func number(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        func airport() -> String { "A\(number(0...24))" }
        func newID() -> Int {
            defer { nextID += 1 }
            return nextID
        }
        // The first steps build up countries and airports; then anything.
        let kind = step < 6 ? step % 2 : number(0...11)
        switch kind {
        case 0:
            let rows = (0..<number(1...3)).map { _ in
                let code = pick(countries)
                return RelCountry(code: code, name: "\(code) \(number(0...3))", continent: pick(["EU", "NA"]))
            }
            return Write(description: "upsert countries \(rows.map(\.code))") { store in
                try await store.repository(RelCountry.self).upsert(rows)
            }
        case 1, 2:
            let airports = (0..<number(1...5)).map { _ in
                RelAirport(
                    icao: airport(), name: "airport \(number(0...9))", country: pick(countries),
                    kind: pick(["small", "large"]), elevation: number(-50...3000))
            }
            return Write(description: "upsert airports \(airports.map { "\($0.icao)→\($0.country)" })") { store in
                try await store.repository(RelAirport.self).upsert(airports)
            }
        case 3:
            let parent = RelAirport(
                icao: airport(), name: "saved \(number(0...9))", country: pick(countries), elevation: number(0...2000))
            let runways = (0..<number(0...4)).map { _ in
                // Sometimes a runway id already used: it moves to this airport.
                RelRunway(
                    id: number(0...3) == 0 ? number(1...max(nextID, 1)) : newID(), airport: "ignored",
                    length: number(800...4000), position: 0)
            }
            let replaced = pick([ReplacedChildren.remove, .keep])
            return Write(description: "save \(parent.icao) with runways \(runways.map(\.id)), replaced \(replaced)") {
                store in
                try await store.repository(RelAirport.self).save(
                    parent, with: runways, in: RelAirport.runways, replaced: replaced)
            }
        case 4:
            let pilots = (0..<number(1...3)).map { _ in
                RelPilot(id: newID(), name: "pilot \(number(0...9))", base: number(0...3) == 0 ? nil : airport())
            }
            return Write(description: "insert pilots \(pilots.map { "\($0.id)@\($0.base ?? "-")" })") { store in
                try await store.repository(RelPilot.self).insert(pilots)
            }
        case 5:
            let alliance = RelAlliance(code: pick(alliances), name: "alliance \(number(0...9))")
            let members = (0..<number(0...3)).map { _ in RelMembership(airport: airport(), alliance: alliance.code) }
            return Write(description: "upsert alliance \(alliance.code), members \(members.map(\.airport))") { store in
                try await store.write { tx in
                    try await tx.repository(RelAlliance.self).upsert(alliance)
                    try await tx.repository(RelMembership.self).upsert(members)
                }
            }
        case 6:
            let code = pick(countries)
            return Write(description: "remove country \(code) (airports cascade)") { store in
                _ = try await store.repository(RelCountry.self).remove(code)
            }
        case 7:
            let elevation = number(500...3000)
            return Write(description: "remove airports above \(elevation) (cascade, nullify)") { store in
                _ = try await store.repository(RelAirport.self).remove(where: \.elevation > elevation)
            }
        case 8:
            let code = pick(alliances)
            return Write(description: "remove alliance \(code) (denied while it has members)") { store in
                _ = try await store.repository(RelAlliance.self).remove(code)
            }
        case 9:
            let patches = (0..<number(1...4)).map { _ in
                Patch<RelAirport>(key: airport()).set(\.elevation, number(-50...3000))
            }
            return Write(description: "patch \(patches.count) airports' elevation") { store in
                try await store.repository(RelAirport.self).apply(patches)
            }
        case 10:
            let owner = airport()
            let runways = (0..<number(0...3)).map { index in
                RelRunway(id: newID(), airport: owner, length: number(800...4000), position: Double(index))
            }
            return Write(description: "replace \(owner)'s runways with \(runways.map(\.id))") { store in
                try await store.repository(RelRunway.self).replace(where: \.airport == owner, with: runways)
            }
        default:
            let owner = airport()
            return Write(description: "remove airport \(owner)") { store in
                _ = try await store.repository(RelAirport.self).remove(owner)
            }
        }
    }

    static func randomQuery(_ random: inout SplitMix64) -> Query {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        func number(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        switch number(0...5) {
        case 0:
            let continent = pick(["EU", "NA"])
            let above = number(-100...2500)
            let limit = number(0...3)
            let order = pick([Ordering<RelAirport>.descending(\.elevation), .ascending(\.name), .ascending(\.kind)])
            let descending = number(0...1) == 0
            return Query(
                description: "countries in \(continent) by name, with airports above \(above) by \(order.term), "
                    + "\(limit) each, with their runways"
            ) { store in
                let countries = try await store.repository(RelCountry.self).fetch(
                    where: \.continent == continent,
                    orderBy: [descending ? .descending(\.name) : .ascending(\.name)],
                    including: [
                        RelCountry.airports.filter(\.elevation > above).sorted(by: order).limit(limit)
                            .including(RelAirport.runways)
                    ])
                return try countries.map { country in
                    "\(country.entity) "
                        + (try country[RelCountry.airports].map { airport in
                            "\(airport.entity) \(try airport[RelAirport.runways].map(\.entity))"
                        }).joined(separator: "; ")
                }.joined(separator: "\n")
            }
        case 1:
            let above = number(-100...2500)
            let limit = number(1...8)
            return Query(
                description: "airports above \(above), limit \(limit), with country, pilots, alliances and runways"
            ) { store in
                let airports = try await store.repository(RelAirport.self).fetch(
                    where: \.elevation > above, orderBy: [.ascending(\.kind), .descending(\.elevation)], limit: limit,
                    including: [
                        RelAirport.country, RelAirport.pilots.sorted(by: .ascending(\.name)), RelAirport.alliances,
                        RelAirport.runways,
                    ])
                return try airports.map { airport in
                    "\(airport.entity) \(try airport[RelAirport.country]?.entity as Any) "
                        + "\(try airport[RelAirport.pilots].map(\.entity)) "
                        + "\(try airport[RelAirport.alliances].map(\.entity)) "
                        + "\(try airport[RelAirport.runways].map(\.entity))"
                }.joined(separator: "\n")
            }
        case 2:
            let continent = pick(["EU", "NA"])
            return Query(description: "airports whose country is in \(continent), and their count") { store in
                let airports = store.repository(RelAirport.self)
                let filter = RelAirport.country.matches(\.continent == continent)
                return "\(try await airports.fetch(where: filter)) \(try await airports.count(where: filter))"
            }
        case 3:
            let length = number(500...4000)
            return Query(description: "countries with no airport; airports with a runway over \(length)") { store in
                let empty = try await store.repository(RelCountry.self).fetch(where: RelCountry.airports.none())
                let long = try await store.repository(RelAirport.self)
                    .count(where: RelAirport.runways.any(\.length > length))
                return "\(empty) \(long)"
            }
        case 4:
            let country = pick(countries)
            return Query(description: "alliances with a member in \(country), with their members") { store in
                let alliances = try await store.repository(RelAlliance.self).fetch(
                    where: RelAlliance.airports.any(\.country == country),
                    including: [RelAlliance.airports.sorted(by: .descending(\.elevation))])
                return try alliances.map { "\($0.entity) \(try $0[RelAlliance.airports].map(\.entity))" }
                    .joined(separator: "\n")
            }
        default:
            let above = number(-100...2500)
            return Query(description: "pilots based at an airport above \(above), and those with no base") { store in
                let pilots = store.repository(RelPilot.self)
                let based = try await pilots.fetch(
                    where: RelPilot.base.matches(\.elevation > above), orderBy: [.descending(\.name)])
                return "\(based) \(try await pilots.count(where: \.base == nil))"
            }
        }
    }
}
