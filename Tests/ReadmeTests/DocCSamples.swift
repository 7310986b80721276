// swift-format-ignore-file: OrderedImports
// The DocC articles' samples that are not the README's, verbatim between the markers
// (ReadmeSampleTests checks them); DocCSampleTests runs them.
import Depot
import DepotPostgres
import DepotSQLite
import DepotTesting
import Foundation
import Synchronization
import Testing

// readme:begin
/// A store that forwards to another and counts the transactions it runs: `Store`'s four
/// requirements, each answered by the base store.
final class CountingTransactionsStore: Store {
    let base: any Store
    private let counter = Mutex(0)

    init(_ base: any Store) { self.base = base }

    var transactions: Int { counter.withLock { $0 } }

    func scan<Result: Sendable>(
        _ query: SelectQuery, _ read: @escaping @Sendable (inout any StoreCursor) throws -> Result
    ) async throws -> Result {
        try await base.scan(query, read)
    }

    func count(_ query: SelectQuery) async throws -> Int { try await base.count(query) }

    func transaction<T: Sendable>(_ body: @Sendable (any StoreWriter) async throws -> T) async throws -> T {
        counter.withLock { $0 += 1 }
        return try await base.transaction(body)
    }

    func commits() -> AsyncStream<StoreCommit> { base.commits() }
}
// readme:end

// readme:begin
func replaceNorway(store: some Store, norway: Country, fresh: [Airport]) async throws {
    try await store.write { tx in
        try await tx.repository(Country.self).upsert(norway)
        try await tx.repository(Airport.self).replace(where: \.country == "NO", with: fresh)
    }
}
// readme:end

// readme:begin
func printNorway(_ airports: Repository<Airport>) async throws {
    // The current result, then a new one after every commit that changed it.
    for try await list in airports.observe(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
        print(list.map(\.name))
    }
}
// readme:end

func relationsArticle(countries: Repository<Country>, airports: Repository<Airport>) async throws -> (
    europe: [Loaded<Country>], inEurope: [Airport], empty: [Country], high: Int
) {
    // readme:begin
    let europe = try await countries.fetch(
        where: \.continent == "EU", orderBy: [.ascending(\.name)],
        including: [Country.airports.filter(\.elevation > 1000).sorted(by: .descending(\.elevation)).limit(3)])
    for country in europe { print(country.name, try country[Country.airports].map(\.name)) }
    // readme:end
    // readme:begin
    let inEurope = try await airports.fetch(where: Airport.country.matches(\.continent == "EU"))
    // WHERE "country" IN (SELECT "code" FROM "countries" WHERE "code" IS NOT NULL AND ("continent" = ?))
    let empty = try await countries.fetch(where: Country.airports.none())
    let high = try await countries.count(where: Country.airports.any(\.elevation > 10_000))
    // readme:end
    return (europe, inEurope, empty, high)
}

// readme:begin
import Depot
import DepotSQLite
import Foundation

/// An app's store: one file in Application Support (the folder created on first launch), its
/// schema brought up to date and checked against the entities before the first screen reads it.
func openAppStore(migrations: Migrations, entities: [any Entity.Type]) async throws -> SQLiteStore {
    let folder = try FileManager.default.url(
        for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
    let store = try SQLiteStore(path: folder.appendingPathComponent("app.sqlite").path)
    try await store.open(migrations, entities: entities)  // migrate, then check every table's shape
    return store
}
// readme:end

// readme:begin
import DepotPostgres

/// A server's store: a pool of connections to one database.
func openServerStore() throws -> PostgresStore {
    var configuration = try PostgresStore.Configuration(url: "postgres://app:secret@db.internal:5432/app")
    configuration.maximumConnections = 10  // per process: the server's max_connections shared by all
    // Behind a transaction-mode PgBouncer, observation listens on a connection of its own:
    // configuration.listenerURL = "postgres://app:secret@db.internal:5432/app"
    return PostgresStore(configuration: configuration)
}
// readme:end

// readme:begin
import DepotPostgres

/// An app instance's store: through PgBouncer to the primary, reads from two streaming standbys.
func openScaledStore() throws -> PostgresStore {
    var configuration = try PostgresStore.Configuration(url: "postgres://app:secret@pgbouncer.internal:6432/app")
    configuration.listenerURL = "postgres://app:secret@db-primary.internal:5432/app"  // LISTEN needs a session
    configuration.replicaURLs = [
        "postgres://app:secret@db-replica-1.internal:5432/app",
        "postgres://app:secret@db-replica-2.internal:5432/app",
    ]
    configuration.maximumReplicaLag = .seconds(5)  // further behind: skipped until it catches up
    configuration.readYourWritesWait = .milliseconds(500)  // then this store's read goes to the primary
    return PostgresStore(configuration: configuration)
}
// readme:end

@Suite("DocC samples")
struct DocCSampleTests {
    @Test("the forwarding store answers as its base and counts one transaction per atomic call")
    func forwardingStore() async throws {
        let store = CountingTransactionsStore(InMemoryStore())
        try await store.repository(Country.self).insert(Country(code: "NO", name: "Norway", continent: "EU"))
        try await quickStart(store: store)
        #expect(try await store.repository(Airport.self).fetch().map(\.icao) == ["ENGM"])
        #expect(store.transactions == 3)  // the country, the airports, the quick start's write
    }

    @Test("the transactions sample replaces a country's airports and the country in one transaction")
    func transactionSample() async throws {
        let store = InMemoryStore()
        let norway = Country(code: "NO", name: "Norway", continent: "EU")
        try await store.repository(Country.self).insert(norway)
        try await quickStart(store: store)
        let fresh = [
            Airport(
                icao: "ENVA", iata: "TRD", name: "Trondheim Værnes", country: "NO", elevation: 56,
                latitude: 63.4578, longitude: 10.924)
        ]
        try await replaceNorway(store: store, norway: norway, fresh: fresh)
        #expect(try await store.repository(Airport.self).fetchAll() == fresh)
    }

    @Test("the PostgreSQL landing sample configures a store without connecting")
    func postgresSample() throws {
        let store = try openServerStore()
        #expect(store.engine.configuration.maximumConnections == 10)
        #expect(store.engine.configuration.host == "db.internal")
    }

    @Test("the scaled PostgreSQL sample configures a pooler, a direct listener and two replicas without connecting")
    func scaledPostgresSample() async throws {
        let store = try openScaledStore()
        let configuration = store.engine.configuration
        #expect(configuration.host == "pgbouncer.internal")
        #expect(configuration.listenerURL == "postgres://app:secret@db-primary.internal:5432/app")
        #expect(configuration.replicaURLs.count == 2)
        await store.close()
    }

    @Test("the relations article's queries answer over a country and its airports")
    func relationsSample() async throws {
        let store = InMemoryStore()
        try await store.repository(Country.self).insert([
            Country(code: "NO", name: "Norway", continent: "EU"),
            Country(code: "AQ", name: "Antarctica", continent: "AN"),
        ])
        try await quickStart(store: store)
        let answers = try await relationsArticle(
            countries: store.repository(Country.self), airports: store.repository(Airport.self))
        #expect(answers.europe.map(\.code) == ["NO"])
        #expect(answers.inEurope.map(\.icao) == ["ENGM"])
        #expect(answers.empty.map(\.code) == ["AQ"])
        #expect(answers.high == 0)
    }
}
