// The README's relations samples, verbatim between the markers (ReadmeSampleTests checks it);
// RelationsSampleTests runs them. `Airport` is the quick start's.
import Depot

// readme:begin
struct Country: Entity {
    var code: String
    var name: String
    var continent: String
    static let schema = Schema<Country>("countries", primaryKey: \.code) {
        Column(\.code, "code"); Column(\.name, "name"); Column(\.continent, "continent")
    }
    static let airports = ToMany(Airport.country)  // the inverse of the key
    static var relations: [any Relation<Country>] { [airports] }
}

extension Airport {  // the airports of the example, whose `country` holds a country code
    static let country = ToOne<Airport, Country>(\.country, onDelete: .cascade)
    static var relations: [any Relation<Airport>] { [country] }
}
// readme:end

func relationsTour(store: some Store) async throws -> (
    europe: [Loaded<Country>], inEurope: [Airport], empty: [Country], high: Int
) {
    let airports = store.repository(Airport.self)
    let countries = store.repository(Country.self)
    // readme:begin
    // Eager loading: one query per relation level, keys bound as one array, stitched by hashing.
    let europe = try await store.repository(Country.self).fetch(
        where: \.continent == "EU", orderBy: [.ascending(\.name)],
        including: [Country.airports.filter(\.elevation > 1000).sorted(by: .descending(\.elevation)).limit(3)])
    for country in europe { print(country.name, try country[Country.airports].map(\.name)) }

    // Predicates across relations run in the store (uncorrelated IN subqueries).
    let inEurope = try await airports.fetch(where: Airport.country.matches(\.continent == "EU"))
    let empty = try await countries.fetch(where: Country.airports.none())
    let high = try await countries.count(where: Country.airports.any(\.elevation > 10_000))

    try await countries.remove("NO")  // removes Norway's airports too (.cascade), in one transaction
    // readme:end
    return (europe, inEurope, empty, high)
}
