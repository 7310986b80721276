import Depot
import DepotTesting
import Testing

struct RejectingMapper: PersistMapper {
    struct Rejected: Error {}
    func entity(from source: String) throws -> TestAirport {
        guard source != "bad" else { throw Rejected() }
        return TestAirport(icao: source, name: source, country: "XX")
    }
}

@Suite("Mapper errors")
struct MapperErrorTests {
    @Test("a mapper's own error becomes .mappingFailed naming the mapper, and nothing is written")
    func mapperFailure() async throws {
        let store = InMemoryStore()
        let airports = store.repository(TestAirport.self)
        let error = await #expect(throws: DepotError.self) {
            try await airports.persist(["AAAA", "bad", "CCCC"], mapper: RejectingMapper())
        }
        #expect(error?.kind == .mappingFailed)
        #expect(error?.message == "RejectingMapper could not map a String for TestAirport")
        #expect(error?.underlying is RejectingMapper.Rejected)
        #expect(try await airports.count() == 0)
    }
}
