import Depot
import Testing

/// One behaviour every store must have, run against a fresh store.
public struct ConformanceCase: Sendable, CustomStringConvertible {
    /// What the case pins down.
    public let name: String
    let body: @Sendable (any Store) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (any Store) async throws -> Void) {
        self.name = name
        self.body = body
    }

    public var description: String { name }

    /// Runs the case against `store`, which must be empty.
    public func run(on store: any Store) async throws {
        try await body(store)
    }
}

/// The backend conformance suite: the behaviours every ``Store`` must share, so the same code
/// gives the same answers on every backend.
///
/// A backend's test target runs each case on a fresh, empty store:
///
/// ```swift
/// import DepotTesting
/// import Testing
///
/// @Test(arguments: StoreConformance.cases)
/// func conformance(_ check: ConformanceCase) async throws {
///     try await check.run(on: InMemoryStore())
/// }
/// ```
public enum StoreConformance {
    /// Every case of the suite.
    public static var cases: [ConformanceCase] {
        valueCases + writeCases + queryCases + transactionCases + mapperCases + partialCases
            + observationCases + relationCases
    }
}

extension Store {
    /// The sample airports, stored.
    func seededAirports() async throws -> Repository<TestAirport> {
        let airports = repository(TestAirport.self)
        try await airports.insert(TestAirport.sample)
        return airports
    }
}

/// The ICAO codes of `airports`, in order.
func codes(_ airports: [TestAirport]) -> [String] { airports.map(\.icao) }

/// The sample's ICAO codes of the airports matching `filter`, sorted by key (the default order).
func expectedCodes(_ filter: (TestAirport) -> Bool) -> [String] {
    TestAirport.sample.filter(filter).map(\.icao).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
}
