import Depot
import Testing

/// One behaviour every store must have, run against a fresh store.
///
/// Take the cases from ``StoreConformance/cases`` and run each with ``ConformanceCase/run(on:)``
/// on an empty store of its own. A case records failed expectations as Swift Testing issues, so run
/// it inside a test; its ``ConformanceCase/name`` labels the test's argument.
public struct ConformanceCase: Sendable, CustomStringConvertible {
    /// What the case pins down.
    public let name: String
    let body: @Sendable (any Store) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (any Store) async throws -> Void) {
        self.name = name
        self.body = body
    }

    /// The case's ``ConformanceCase/name``, which Swift Testing shows as the test's argument.
    public var description: String { name }

    /// Runs the case against `store`, which must be empty.
    ///
    /// - Parameter store: A new, empty store of the backend under test; the case writes the rows it
    ///   needs and leaves them there.
    /// - Throws: Errors the case did not expect from the store, or from a failed `#require`. Failed
    ///   `#expect`s are recorded as issues of the running test instead.
    ///
    /// A store with a commit listener of its own (PostgreSQL's `LISTEN`) has it listening before
    /// the case starts: when it comes into force, every observer reads again once, and cases that
    /// count an observer's reads or a store's notices count their own.
    public func run(on store: any Store) async throws {
        guard let listener = store as? any CommitListening else { return try await body(store) }
        let listening = store.commits()
        defer { withExtendedLifetime(listening) {} }
        #expect(await listener.waitUntilListening(timeout: .seconds(90)), "the store's commit listener listens")
        try await body(store)
    }
}

/// The backend conformance suite: the behaviours every `Store` must share, so the same code
/// gives the same answers on every backend.
///
/// A backend's test target runs each case on a fresh, empty store:
///
/// ```swift
/// import Depot
/// import DepotTesting
/// import Testing
///
/// @Test(arguments: StoreConformance.cases)
/// func conformance(_ check: ConformanceCase) async throws {
///     try await check.run(on: InMemoryStore())
/// }
/// ```
///
/// Give each case a store of its own (a new in-memory store, temporary database file or scratch
/// schema): cases assume they start empty. The cases use the fixtures of this module, such as
/// ``TestAirport``, ``AllTypes``, ``Reading``, ``TestUser`` and the relation entities
/// (``RelationSample``). ``MigrationConformance`` is the companion suite for migrations.
public enum StoreConformance {
    /// Every case of the suite: values, writes, queries, transactions, mappers, partial updates,
    /// observation and relations, each with a name of its own.
    public static var cases: [ConformanceCase] {
        let queries = queryCases + aggregateCases + updateCases + sqlCases + geoCases + sortingCases + searchCases
        return valueCases + writeCases + bulkWriteCases + queries + transactionCases + mapperCases + partialCases
            + observationCases + keyedObservationCases
            + relationCases + badInputCases + schemaIndexCases + typeMatrixCases
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

extension StoreCommit {
    /// The tables a commit announces, less Depot's own bookkeeping (`depot_…`): a store that
    /// syncs writes its outbox in the same commit as each change.
    var storeTables: Set<String> { tables.filter { !$0.hasPrefix("depot_") } }
}

extension AsyncStream<StoreCommit>.Iterator {
    /// The next commit that names its tables: an announcement that anything may have changed
    /// (PostgreSQL's listener coming into force, another process's commit) can come at any time.
    mutating func nextNamed() async -> StoreCommit? {
        while let commit = await next() {
            if !commit.mayHaveChangedAnything { return commit }
        }
        return nil
    }
}
