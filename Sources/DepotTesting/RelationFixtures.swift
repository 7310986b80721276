import Depot

// Entities with relations, for the relation cases of the conformance suite: countries have
// airports (cascade), airports have runways (ordered, cascade), pilots based at them (nullify)
// and alliances through memberships (many-to-many; removing an alliance with members is denied).

/// A country: the "one" side of airports.
public struct RelCountry: Entity, Equatable, Hashable {
    public var code: String
    public var name: String
    public var continent: String

    public init(code: String, name: String, continent: String) {
        self.code = code
        self.name = name
        self.continent = continent
    }

    public static let schema = Schema<RelCountry>("rel_countries", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.name, "name")
        Column(\.continent, "continent")
    }

    public static let airports = ToMany(RelAirport.country)
    public static var relations: [any Relation<RelCountry>] { [airports] }
}

/// An airport in a country.
public struct RelAirport: Entity, Equatable, Hashable {
    public var icao: String
    public var name: String
    public var country: String
    public var kind: String
    public var elevation: Int

    public init(icao: String, name: String, country: String, kind: String = "small", elevation: Int = 0) {
        self.icao = icao
        self.name = name
        self.country = country
        self.kind = kind
        self.elevation = elevation
    }

    public static let schema = Schema<RelAirport>("rel_airports", primaryKey: \.icao) {
        Column(\.icao, "icao")
        Column(\.name, "name")
        Column(\.country, "country")
        Column(\.kind, "kind")
        Column(\.elevation, "elevation")
    }

    public static let country = ToOne<RelAirport, RelCountry>(\.country, onDelete: .cascade)
    public static let runways = ToMany(RelRunway.airport, orderedBy: \.position)
    public static let pilots = ToMany(RelPilot.base)
    public static let alliances = ManyToMany(through: RelMembership.airport, to: RelMembership.alliance)
    public static var relations: [any Relation<RelAirport>] { [country, runways, pilots, alliances] }
}

/// A runway of an airport, kept in order.
public struct RelRunway: Entity, Equatable, Hashable {
    public var id: Int
    public var airport: String
    public var length: Int
    public var position: Double

    public init(id: Int, airport: String, length: Int, position: Double) {
        self.id = id
        self.airport = airport
        self.length = length
        self.position = position
    }

    public static let schema = Schema<RelRunway>("rel_runways", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.airport, "airport")
        Column(\.length, "length")
        Column(\.position, "position")
    }

    public static let airport = ToOne<RelRunway, RelAirport>(\.airport, onDelete: .cascade)
    public static var relations: [any Relation<RelRunway>] { [airport] }
}

/// A pilot, optionally based at an airport; removing the airport leaves the pilot unbased.
public struct RelPilot: Entity, Equatable, Hashable {
    public var id: Int
    public var name: String
    public var base: String?

    public init(id: Int, name: String, base: String?) {
        self.id = id
        self.name = name
        self.base = base
    }

    public static let schema = Schema<RelPilot>("rel_pilots", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.name, "name")
        Column(\.base, "base")
    }

    public static let base = ToOne<RelPilot, RelAirport>(\.base, onDelete: .nullify)
    public static var relations: [any Relation<RelPilot>] { [base] }
}

/// An alliance of airports.
public struct RelAlliance: Entity, Equatable, Hashable {
    public var code: String
    public var name: String

    public init(code: String, name: String) {
        self.code = code
        self.name = name
    }

    public static let schema = Schema<RelAlliance>("rel_alliances", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.name, "name")
    }

    public static let airports = ManyToMany(through: RelMembership.alliance, to: RelMembership.airport)
    public static var relations: [any Relation<RelAlliance>] { [airports] }
}

/// The join entity of airports and alliances.
public struct RelMembership: Entity, Equatable, Hashable {
    public var airport: String
    public var alliance: String

    public init(airport: String, alliance: String) {
        self.airport = airport
        self.alliance = alliance
    }

    public static let schema = Schema<RelMembership>("rel_memberships", primaryKey: \.airport, \.alliance) {
        Column(\.airport, "airport")
        Column(\.alliance, "alliance")
    }

    public static let airport = ToOne<RelMembership, RelAirport>(\.airport, onDelete: .cascade)
    public static let alliance = ToOne<RelMembership, RelAlliance>(\.alliance, onDelete: .deny)
    public static var relations: [any Relation<RelMembership>] { [airport, alliance] }
}

/// An employee with an optional manager: a relation of a table to itself.
public struct RelEmployee: Entity, Equatable, Hashable {
    public var id: Int
    public var manager: Int?

    public init(id: Int, manager: Int?) {
        self.id = id
        self.manager = manager
    }

    public static let schema = Schema<RelEmployee>("rel_employees", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.manager, "manager")
    }

    public static let manager = ToOne<RelEmployee, RelEmployee>(\.manager, onDelete: .cascade)
    public static let reports = ToMany(RelEmployee.manager)
    public static var relations: [any Relation<RelEmployee>] { [manager, reports] }
}

/// A relation whose target does not declare the inverse: a declaration error.
public struct RelOrphanReference: Entity, Equatable {
    public var id: Int
    public var country: String

    public static let schema = Schema<RelOrphanReference>("rel_orphans", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.country, "country")
    }

    public static let country = ToOne<RelOrphanReference, RelCountry>(\.country)
    public static var relations: [any Relation<RelOrphanReference>] { [country] }
}

/// A relation whose key column's type differs from the target's key: a declaration error.
public struct RelMistypedReference: Entity, Equatable {
    public var id: Int
    public var airport: Int

    public static let schema = Schema<RelMistypedReference>("rel_mistyped", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.airport, "airport")
    }

    public static let airport = ToOne<RelMistypedReference, RelAirport>(\.airport, onDelete: .nullify)
    public static var relations: [any Relation<RelMistypedReference>] { [airport] }
}

/// A small graph of related rows, stored by ``Store/seededRelations()``.
public enum RelationSample {
    public static let countries = [
        RelCountry(code: "NO", name: "Norway", continent: "EU"),
        RelCountry(code: "IS", name: "Iceland", continent: "EU"),
        RelCountry(code: "US", name: "United States", continent: "NA"),
        RelCountry(code: "AQ", name: "Antarctica", continent: "AN"),
    ]
    public static let airports = [
        RelAirport(icao: "ENGM", name: "Oslo", country: "NO", kind: "large", elevation: 681),
        RelAirport(icao: "ENBR", name: "Bergen", country: "NO", kind: "medium", elevation: 170),
        RelAirport(icao: "ENSB", name: "Svalbard", country: "NO", kind: "medium", elevation: 88),
        RelAirport(icao: "BIKF", name: "Keflavik", country: "IS", kind: "large", elevation: 171),
        RelAirport(icao: "KJFK", name: "Kennedy", country: "US", kind: "large", elevation: 13),
        RelAirport(icao: "KDEN", name: "Denver", country: "US", kind: "large", elevation: 5434),
        RelAirport(icao: "KXXX", name: "Strip", country: "US", kind: "small", elevation: 5),
    ]
    public static let runways = [
        RelRunway(id: 1, airport: "ENGM", length: 3600, position: 2),
        RelRunway(id: 2, airport: "ENGM", length: 2950, position: 1),
        RelRunway(id: 3, airport: "ENBR", length: 2990, position: 1),
        RelRunway(id: 4, airport: "KDEN", length: 4877, position: 3),
        RelRunway(id: 5, airport: "KDEN", length: 3658, position: 1),
        RelRunway(id: 6, airport: "KDEN", length: 3658, position: 2),
        RelRunway(id: 7, airport: "KJFK", length: 4423, position: 1),
    ]
    public static let pilots = [
        RelPilot(id: 1, name: "Ada", base: "ENGM"),
        RelPilot(id: 2, name: "Bo", base: "ENBR"),
        RelPilot(id: 3, name: "Cy", base: nil),
        RelPilot(id: 4, name: "Di", base: "ENGM"),
    ]
    public static let alliances = [
        RelAlliance(code: "N", name: "Nordic"),
        RelAlliance(code: "H", name: "Hubs"),
        RelAlliance(code: "E", name: "Empty"),
    ]
    public static let memberships = [
        RelMembership(airport: "ENGM", alliance: "N"),
        RelMembership(airport: "ENBR", alliance: "N"),
        RelMembership(airport: "BIKF", alliance: "N"),
        RelMembership(airport: "ENGM", alliance: "H"),
        RelMembership(airport: "KJFK", alliance: "H"),
        RelMembership(airport: "KDEN", alliance: "H"),
    ]
}

extension Store {
    /// The relation sample, stored parents first.
    public func seededRelations() async throws {
        try await write { tx in
            try await tx.repository(RelCountry.self).insert(RelationSample.countries)
            try await tx.repository(RelAirport.self).insert(RelationSample.airports)
            try await tx.repository(RelRunway.self).insert(RelationSample.runways)
            try await tx.repository(RelPilot.self).insert(RelationSample.pilots)
            try await tx.repository(RelAlliance.self).insert(RelationSample.alliances)
            try await tx.repository(RelMembership.self).insert(RelationSample.memberships)
        }
    }
}
