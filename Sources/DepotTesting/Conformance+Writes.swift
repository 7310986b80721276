import Depot
import Foundation
import Testing

extension StoreConformance {
    static let writeCases: [ConformanceCase] = [
        ConformanceCase("insert stores rows and find reads them by key") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(try await airports.count() == TestAirport.sample.count)
            #expect(try await airports.find("ENGM") == TestAirport.sample[0])
            #expect(try await airports.find("NONE") == nil)
            #expect(try await airports.fetchAll() == TestAirport.sample.sorted { $0.icao < $1.icao })
        },
        ConformanceCase("insert of an existing key fails and writes nothing of the batch") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let fresh = TestAirport(icao: "AAAA", name: "New", country: "XX")
            let clash = TestAirport(icao: "ENGM", name: "Clash", country: "NO")
            let error = await #expect(throws: DepotError.self) {
                try await airports.insert([fresh, clash])
            }
            #expect(error?.kind == .constraintViolation)
            #expect(error?.message.contains("ENGM") == true)
            #expect(try await airports.find("AAAA") == nil)
            #expect(try await airports.find("ENGM")?.name == "Oslo Gardermoen Airport")
        },
        ConformanceCase("a raw write batch without its key column fails, naming the column, and writes nothing") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let table = TestAirport.schema.table
            for mode in [WriteMode.insert, .upsert, .update] {
                let error = await #expect(throws: DepotError.self) {
                    try await store.transaction { writer in
                        try await writer.write(
                            RowBatch(columns: ["name"], values: [.text("Renamed")]), into: table, mode: mode)
                    }
                }
                #expect(error?.kind == .missingColumns)
                #expect(error?.message == "a write to airports lacks key column 'icao'")
            }
            #expect(try await airports.fetchAll() == TestAirport.sample.sorted { $0.icao < $1.icao })
        },
        ConformanceCase("insert with a key twice in one batch fails and writes nothing") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            let one = TestAirport(icao: "DUPE", name: "One", country: "XX")
            let other = TestAirport(icao: "OKAY", name: "Other", country: "XX")
            let error = await #expect(throws: DepotError.self) {
                try await airports.insert([other, one, one])
            }
            #expect(error?.message.contains("DUPE") == true)
            #expect(try await airports.count() == 0)
        },
        ConformanceCase("upsert inserts new keys and replaces existing ones; the last duplicate wins") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            var oslo = TestAirport.sample[0]
            oslo.name = "Oslo"
            oslo.iata = nil
            let first = TestAirport(icao: "ZZZZ", name: "first", country: "XX")
            let last = TestAirport(icao: "ZZZZ", name: "last", country: "YY")
            try await airports.upsert([first, oslo, last])
            #expect(try await airports.find("ENGM") == oslo)
            #expect(try await airports.find("ZZZZ") == last)
            #expect(try await airports.count() == TestAirport.sample.count + 1)
        },
        ConformanceCase("empty inputs are no-ops") { (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            try await airports.insert([])
            try await airports.upsert([])
            #expect(try await airports.fetchAll().isEmpty)
            #expect(try await airports.count() == 0)
            #expect(try await airports.removeAll() == 0)
            #expect(try await airports.remove(where: \.country == "NO") == 0)
            #expect(try await airports.first() == nil)
            try await airports.replace(where: .all, with: [])
            #expect(try await airports.count() == 0)
        },
        ConformanceCase("remove by predicate, by key and all, returning counts") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            #expect(try await airports.remove(where: \.country == "NO") == 4)
            #expect(try await airports.remove("EDDM"))
            #expect(try await airports.remove("EDDM") == false)
            #expect(try await airports.count() == TestAirport.sample.count - 5)
            #expect(try await airports.removeAll() == TestAirport.sample.count - 5)
            #expect(try await airports.count() == 0)
        },
        ConformanceCase("replace(where:with:) swaps the matching set in one step") { (store: any Store) async throws in
            let airports = try await store.seededAirports()
            let fresh = [
                TestAirport(icao: "ENXA", name: "New A", country: "NO"),
                TestAirport(icao: "ENXB", name: "New B", country: "NO"),
            ]
            try await airports.replace(where: \.country == "NO", with: fresh)
            #expect(codes(try await airports.fetch(where: \.country == "NO")) == ["ENXA", "ENXB"])
            #expect(try await airports.count() == TestAirport.sample.count - 4 + 2)
        },
        ConformanceCase("composite keys: find, upsert and remove by both columns") { (store: any Store) async throws in
            let readings = store.repository(Reading.self)
            try await readings.insert([
                Reading(station: "a", sequence: 1, value: 1.5), Reading(station: "a", sequence: 2, value: nil),
                Reading(station: "b", sequence: 1, value: -2),
            ])
            #expect(try await readings.find("a", 2) == Reading(station: "a", sequence: 2, value: nil))
            try await readings.upsert(Reading(station: "a", sequence: 2, value: 9))
            #expect(try await readings.find("a", 2)?.value == 9)
            #expect(try await readings.remove("b", 1))
            #expect(try await readings.count() == 2)
            let error = await #expect(throws: DepotError.self) { _ = try await readings.find("a") }
            #expect(error?.kind == .invalidQuery)
        },
        ConformanceCase("a committed write is announced with its table; a failed one is not") {
            (store: any Store) async throws in
            let commits = store.commits()
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample[0])
            await #expect(throws: DepotError.self) { try await airports.insert(TestAirport.sample[0]) }
            try await store.repository(Reading.self).insert(Reading(station: "x", sequence: 1, value: nil))
            var seen: [Set<String>] = []
            for await commit in commits where !commit.mayHaveChangedAnything {
                seen.append(commit.storeTables)
                if seen.count == 2 { break }
            }
            #expect(seen == [["airports"], ["readings"]])
        },
        ConformanceCase("concurrent writers all land") { (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for index in 0..<25 {
                            try await airports.upsert(
                                TestAirport(icao: "T\(task)_\(index)", name: "n", country: "C\(task)"))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await airports.count() == 200)
            #expect(try await airports.count(where: \.country == "C3") == 25)
        },
        ConformanceCase("a schema declaration problem is a thrown error naming entity and column") {
            (store: any Store) async throws in
            let broken = store.repository(BrokenEntity.self)
            let error = await #expect(throws: DepotError.self) {
                try await broken.insert(BrokenEntity(id: 1, note: "x"))
            }
            #expect(error?.kind == .invalidSchema)
            #expect(error?.message.contains("BrokenEntity") == true)
            #expect(error?.message.contains("'bad name'") == true)
            let uncovered = store.repository(UncoveredEntity.self)
            let missing = await #expect(throws: DepotError.self) { _ = try await uncovered.fetchAll() }
            #expect(missing?.message.contains("'secret'") == true)
        },
    ]
}

/// An entity whose schema has an invalid column name.
struct BrokenEntity: Entity {
    var id: Int
    var note: String
    static let schema = Schema<BrokenEntity>("broken", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.note, "bad name")
    }
}

/// An entity with a stored property that has no column and no custom decoder.
struct UncoveredEntity: Entity {
    var id: Int
    var secret: String
    static let schema = Schema<UncoveredEntity>("uncovered", primaryKey: \.id) {
        Column(\.id, "id")
    }
}
