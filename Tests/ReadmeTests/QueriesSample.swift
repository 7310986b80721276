// The README's query samples, verbatim between the markers (ReadmeSampleTests checks them);
// SampleRunTests runs them on every store kind it has and checks their answers.
import Depot
import DepotSQL

struct CountryStats: Equatable {
    var country: String
    var airports: Int
    var highest: Double?
}

func aggregateTour(airports: Repository<Airport>) async throws -> [CountryStats] {
    // readme:begin
    // One statement, inside the store: nothing is fetched into Swift.
    let (count, highest, mean) = try await airports.aggregate(
        .count, .max(\.elevation), .average(\.elevation), where: \.country == "NO")
    let coded = try await airports.count(where: \.iata != nil)
    let total = try await airports.sum(\.elevation, where: \.country == "NO")
    let countries = try await airports.distinct(\.country)  // ["NO", "SE", …], byte order
    let any = try await airports.exists(where: \.iata == "OSL")

    // Groups: a tuple per group, typed by the key paths and aggregates.
    let busiest = try await airports.group(
        by: \.country, computing: .count, .max(\.elevation),
        where: \.elevation > 0, having: Aggregate.count >= 2,
        orderBy: [.descending(.count)], limit: 10)
    // [(String, Int, Double?)]
    // readme:end
    print(count, highest ?? 0, mean ?? 0, coded, total, countries, any)
    return busiest.map { CountryStats(country: $0.0, airports: $0.1, highest: $0.2) }
}

// readme:begin
struct AirportLabel: Equatable {
    var code: String
    var name: String
}

func projectionTour(airports: Repository<Airport>) async throws -> [AirportLabel] {
    // Only the asked columns are read: no entity is decoded.
    let names = try await airports.select(\.icao, \.name, where: \.country == "NO", orderBy: [.ascending(\.name)])
    // [(String, String)]
    let labels = try await airports.select(\.icao, \.name, where: \.country == "NO") { icao, name in
        AirportLabel(code: icao, name: name)
    }
    print(names)
    return labels
}
// readme:end

func updateTour(airports: Repository<Airport>) async throws -> Int {
    // readme:begin
    // One UPDATE inside the store; returns how many rows matched.
    let raised = try await airports.update(where: \.country == "NO", set: \.elevation, to: \.elevation + 10)
    try await airports.update(
        where: \.iata == nil,
        set: [.set(\.name, to: "Unnamed strip"), .set(\.elevation, to: \.elevation - 1)])
    // readme:end
    return raised
}

// readme:begin
struct CountryCount: Decodable, Sendable {
    var country: String
    var n: Int
}

func sqlTour(store: some SQLRunning) async throws -> [CountryCount] {
    let minimum = 1_000.0
    // Values are always bound; tables and columns come from the schema, quoted.
    let high = try await store.sql(
        "SELECT * FROM \(table: Airport.self) WHERE \(column: \Airport.elevation) > \(minimum)", as: Airport.self)
    let counts = try await store.sql(
        "SELECT country, count(*) AS n FROM \(table: Airport.self) GROUP BY country ORDER BY n DESC, country",
        decoding: CountryCount.self)
    // Where the dialects differ, each gets its own text.
    let named = try await store.sql(
        SQL(
            sqlite: "SELECT * FROM \(table: Airport.self) WHERE instr(name, \("Oslo")) > 0",
            postgres: "SELECT * FROM \(table: Airport.self) WHERE strpos(name, \("Oslo")) > 0"),
        as: Airport.self)
    print(high.count, named.count)
    return counts
}
// readme:end

func geoTour(airports: Repository<Airport>) async throws -> ([Airport], Int) {
    // readme:begin
    let oslo = Coordinate(latitude: 59.91, longitude: 10.75)
    // The 5 nearest, found through growing circles that an index on the coordinates serves.
    let nearest = try await airports.nearest(5, to: oslo, latitude: \.latitude, longitude: \.longitude)
    // A distance filter: combine it with any other.
    let around = try await airports.count(
        where: \.iata != nil && .within(kilometers: 50, of: oslo, latitude: \.latitude, longitude: \.longitude))
    // readme:end
    return (nearest, around)
}

func sortingTour(airports: Repository<Airport>) async throws -> [Section<String, Airport>] {
    // readme:begin
    // Orders for people: "apple" < "Banana" < "cherry"; with diacritics ignored, "Århus" beside "Arhus".
    let byName = try await airports.fetch(orderBy: [.ascending(\.name, .caseInsensitive)])
    let plain = try await airports.fetch(
        where: .contains(\.name, "sao", .caseAndDiacriticInsensitive),  // finds "São Paulo"
        orderBy: [.ascending(\.name, .caseAndDiacriticInsensitive)])
    // A sectioned list: one query, cut where the key changes; observeSections(by:) keeps it live.
    let byCountry = try await airports.sections(by: \.country, orderBy: [.ascending(\.name, .caseInsensitive)])
    // readme:end
    print(byName.count, plain.count)
    return byCountry
}

// readme:begin
let searchMigrations = Migrations([
    Migration("1 airports", [.createTable(Airport.self)]),
    Migration("2 search names", [.createSearchIndex(Airport.self, \.name)]),
])
// readme:end

func searchTour(store: some MigratableStore) async throws -> [Airport] {
    // readme:begin
    try await store.migrate(searchMigrations)
    let airports = store.repository(Airport.self)
    // Every query word is the start of a word of the name, in any case: "osl gard" finds
    // "Oslo Gardermoen"; .caseAndDiacriticInsensitive also lets "sao" find "São Paulo".
    let found = try await airports.fetch(
        where: .matches(\.name, "osl gard"), orderBy: [.relevance(\.name, to: "osl gard")], limit: 20)
    // readme:end
    return found
}
