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

extension Airport {  // the quick start's airports, whose `country` holds a country code
    static let country = ToOne<Airport, Country>(\.country, onDelete: .cascade)
    static var relations: [any Relation<Airport>] { [country] }
}
// readme:end

func relationsTour(store: some Store) async throws -> (
    europe: [Loaded<Country>], inEurope: [Airport], empty: [Country], high: Int
) {
    let countries = store.repository(Country.self)
    // The README's and the relations article's queries (DocCSamples.swift).
    let answers = try await relationsArticle(countries: countries, airports: store.repository(Airport.self))
    try await countries.remove("NO")  // removes Norway's airports too (.cascade), in one transaction
    return answers
}
