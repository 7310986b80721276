import Depot
import Testing

/// A domain model kept apart from its stored record.
struct AirportModel: Sendable, Equatable {
    var code: String
    var title: String
    var countryCode: String
}

struct AirportModelMapper: DomainMapper {
    func model(from entity: TestAirport) throws -> AirportModel {
        AirportModel(code: entity.icao, title: entity.name, countryCode: entity.country)
    }
    func entity(from model: AirportModel) throws -> TestAirport {
        TestAirport(icao: model.code, name: model.title, country: model.countryCode)
    }
}

/// An API-like source model.
struct AirportPayload: Sendable {
    var id: String
    var displayName: String
}

struct PayloadMapper: PersistMapper {
    func entity(from source: AirportPayload) throws -> TestAirport {
        TestAirport(icao: source.id, name: source.displayName, country: "ZZ")
    }
}

/// Renames stored airports in place, creating the missing ones.
struct RenameMapper: UpdateMapper {
    func key(of source: AirportPayload) -> String { source.id }
    func makeEntity(from source: AirportPayload) throws -> TestAirport {
        TestAirport(icao: source.id, name: source.displayName, country: "NEW")
    }
    func update(_ entity: inout TestAirport, from source: AirportPayload) throws {
        entity.name = source.displayName
    }
}

/// Adds to an airport's elevation: a read-modify-write that loses updates unless rows are locked.
package struct ClimbMapper: UpdateMapper {
    package init() {}
    package func key(of source: String) -> String { source }
    package func makeEntity(from source: String) throws -> TestAirport {
        TestAirport(icao: source, name: "climb", country: "ZZ", elevation: 1)
    }
    package func update(_ entity: inout TestAirport, from source: String) throws { entity.elevation += 1 }
}

extension StoreConformance {
    static let mapperCases: [ConformanceCase] = [
        ConformanceCase("UpdateMapper calls running side by side lose no update, also on keys not stored yet") {
            (store: any Store) async throws in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport(icao: "OLD1", name: "climb", country: "ZZ", elevation: 0))
            // 16 callers at once: each adds 1 to a stored row and to one none has stored yet.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await airports.persist(["OLD1", "NEW1"], mapper: ClimbMapper()) }
                }
                try await group.waitForAll()
            }
            #expect(try await airports.find("OLD1")?.elevation == 16)
            #expect(try await airports.find("NEW1")?.elevation == 16)
        },
        ConformanceCase("a domain-mapped repository reads and writes models") { (store: any Store) async throws in
            _ = try await store.seededAirports()
            let models = store.repository(TestAirport.self).mapped(by: AirportModelMapper())
            let norwegian = try await models.fetch(where: \.country == "NO", orderBy: [.ascending(\.name)])
            #expect(norwegian.map(\.title).first == "Bergen Airport Flesland")
            try await models.upsert(AirportModel(code: "MMMM", title: "Model", countryCode: "XX"))
            #expect(try await models.find("MMMM") == AirportModel(code: "MMMM", title: "Model", countryCode: "XX"))
            #expect(try await models.count(where: \.country == "XX") == 1)
        },
        ConformanceCase("a persist mapper upserts by primary key from another model") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            try await airports.persist(
                [AirportPayload(id: "ENGM", displayName: "Oslo"), AirportPayload(id: "XNEW", displayName: "New")],
                mapper: PayloadMapper())
            #expect(try await airports.find("ENGM")?.name == "Oslo")
            #expect(try await airports.find("ENGM")?.country == "ZZ")
            #expect(try await airports.find("XNEW")?.name == "New")
        },
        ConformanceCase("an update mapper merges into stored rows and keeps their other fields") {
            (store: any Store) async throws in
            let airports = try await store.seededAirports()
            try await airports.persist(
                [
                    AirportPayload(id: "ENGM", displayName: "Oslo"), AirportPayload(id: "XNEW", displayName: "New"),
                    AirportPayload(id: "ENGM", displayName: "Oslo lufthavn"),
                ],
                mapper: RenameMapper())
            var expected = TestAirport.sample[0]
            expected.name = "Oslo lufthavn"
            #expect(try await airports.find("ENGM") == expected)
            #expect(try await airports.find("XNEW")?.country == "NEW")
            #expect(try await airports.count() == 11)
        },
    ]
}
