/// Related rows to load with a query's results: a relation, optionally filtered, sorted and
/// limited per parent, with further relations of its own.
///
/// ```swift
/// let countries = try await store.repository(Country.self).fetch(
///     where: \.continent == "EU",
///     including: [Country.airports.filter(\.kind == "large_airport")
///                     .sorted(by: .descending(\.elevation)).limit(3)
///                     .including(Airport.runways)])
/// for country in countries {
///     print(country.name, country[Country.airports].map(\.name))
/// }
/// ```
/// Each relation level is one query, whatever the number of parents (their keys travel as one
/// bound array, so any number works), and rows are matched to parents by hashing: O(n + m).
public protocol IncludeSpec<Source>: Sendable {
    /// The entity whose rows the related rows are loaded for.
    associatedtype Source: Entity
    /// The related values of each of `parents`, in their order, and the key they are kept under.
    func load(for parents: [Source], from reader: any StoreReader) async throws -> IncludedValues
    /// Every table the include reads, nested includes and filters across relations included.
    var tables: [TableDescription] { get }
}

/// What one include loaded: a value per parent, under the relation's key.
public struct IncludedValues: Sendable {
    let key: String
    let values: [any Sendable]
}
