import Depot

// Entities with relations, for the relation cases of the conformance suite: countries have
// airports (cascade), airports have runways (ordered, cascade), pilots based at them (nullify)
// and alliances through memberships (many-to-many; removing an alliance with members is denied).

/// A country: the "one" side of airports.
///
/// With ``RelAirport``, ``RelRunway``, ``RelPilot``, ``RelAlliance`` and ``RelMembership`` it forms the
/// graph the relation cases of ``StoreConformance`` include, filter across and delete from;
/// ``RelationSample`` holds the rows.
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_countries")
#endif
public struct RelCountry: Entity, Equatable, Hashable {
    /// A two-letter country code, such as `NO`: the primary key (column `code`).
    @PrimaryKey public var code: String
    /// The country's English name.
    public var name: String
    /// A two-letter continent code, such as `EU`; predicates across relations filter on it.
    public var continent: String

    /// Creates a country.
    public init(code: String, name: String, continent: String) {
        self.code = code
        self.name = name
        self.continent = continent
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_countries`, keyed by `code`.
        public static let schema = Schema<RelCountry>("rel_countries", primaryKey: \.code) {
            Column(\.code, "code")
            Column(\.name, "name")
            Column(\.continent, "continent")
        }
    #endif

    /// The country's airports: the to-many inverse of `RelAirport.country`, for includes and `any`/`none`
    /// predicates.
    public static let airports = ToMany(RelAirport.country)
    /// The relations stores check and enforce for this entity: ``RelCountry/airports``.
    public static var relations: [any Relation<RelCountry>] { [airports] }
}

/// An airport in a country: the hub of the relation fixtures, with its country (cascade), runways
/// (ordered), pilots (nullify) and alliances (many-to-many).
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_airports")
#endif
public struct RelAirport: Entity, Equatable, Hashable {
    /// The ICAO code, such as `ENGM`: the primary key (column `icao`).
    @PrimaryKey public var icao: String
    /// The airport's short name.
    public var name: String
    /// The code of its ``RelCountry``: the key of the static `country` relation (column `country`).
    public var country: String
    /// The size class: `small`, `medium` or `large`; includes and predicates filter on it.
    public var kind: String
    /// The elevation in whole feet above sea level.
    public var elevation: Int

    /// Creates an airport; `kind` defaults to `small` and `elevation` to 0.
    public init(icao: String, name: String, country: String, kind: String = "small", elevation: Int = 0) {
        self.icao = icao
        self.name = name
        self.country = country
        self.kind = kind
        self.elevation = elevation
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_airports`, keyed by `icao`.
        public static let schema = Schema<RelAirport>("rel_airports", primaryKey: \.icao) {
            Column(\.icao, "icao")
            Column(\.name, "name")
            Column(\.country, "country")
            Column(\.kind, "kind")
            Column(\.elevation, "elevation")
        }
    #endif

    /// The airport's ``RelCountry``, through the `country` column; removing a country removes its
    /// airports (`.cascade`).
    public static let country = ToOne<RelAirport, RelCountry>(\.country, onDelete: .cascade)
    /// The airport's runways, in ``RelRunway/position`` order: the ordered to-many inverse of
    /// `RelRunway.airport`.
    public static let runways = ToMany(RelRunway.airport, orderedBy: \.position)
    /// The pilots based at the airport: the unordered to-many inverse of `RelPilot.base`.
    public static let pilots = ToMany(RelPilot.base)
    /// The alliances the airport belongs to, through the ``RelMembership`` join rows.
    public static let alliances = ManyToMany(through: RelMembership.airport, to: RelMembership.alliance)
    /// The relations stores check and enforce for this entity: `country`, ``RelAirport/runways``,
    /// ``RelAirport/pilots`` and ``RelAirport/alliances``.
    public static var relations: [any Relation<RelAirport>] { [country, runways, pilots, alliances] }
}

/// A runway of an airport, kept in order: for the ordered to-many cases (includes, moves, saving
/// a parent with its children).
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_runways")
#endif
public struct RelRunway: Entity, Equatable, Hashable {
    /// The primary key (column `id`).
    @PrimaryKey public var id: Int
    /// The ICAO code of its ``RelAirport``: the key of the static `airport` relation (column `airport`).
    public var airport: String
    /// The length in meters.
    public var length: Int
    /// The runway's place among its airport's runways: lower first. Fractional, so a move rewrites
    /// one row.
    public var position: Double

    /// Creates a runway.
    public init(id: Int, airport: String, length: Int, position: Double) {
        self.id = id
        self.airport = airport
        self.length = length
        self.position = position
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_runways`, keyed by `id`.
        public static let schema = Schema<RelRunway>("rel_runways", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.airport, "airport")
            Column(\.length, "length")
            Column(\.position, "position")
        }
    #endif

    /// The runway's ``RelAirport``, through the `airport` column; removing an airport removes its
    /// runways (`.cascade`).
    public static let airport = ToOne<RelRunway, RelAirport>(\.airport, onDelete: .cascade)
    /// The relations stores check and enforce for this entity: `airport`.
    public static var relations: [any Relation<RelRunway>] { [airport] }
}

/// A pilot, optionally based at an airport; removing the airport leaves the pilot unbased
/// (`.nullify`).
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_pilots")
#endif
public struct RelPilot: Entity, Equatable, Hashable {
    /// The primary key (column `id`).
    @PrimaryKey public var id: Int
    /// The pilot's name.
    public var name: String
    /// The ICAO code of the pilot's base airport; `nil` when unbased (column `base`).
    public var base: String?

    /// Creates a pilot.
    public init(id: Int, name: String, base: String?) {
        self.id = id
        self.name = name
        self.base = base
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_pilots`, keyed by `id`.
        public static let schema = Schema<RelPilot>("rel_pilots", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.name, "name")
            Column(\.base, "base")
        }
    #endif

    /// The pilot's base ``RelAirport``, through the `base` column; removing the airport sets `base` to
    /// `nil` (`.nullify`).
    public static let base = ToOne<RelPilot, RelAirport>(\.base, onDelete: .nullify)
    /// The relations stores check and enforce for this entity: `base`.
    public static var relations: [any Relation<RelPilot>] { [base] }
}

/// An alliance of airports: the other side of the many-to-many relation through ``RelMembership``.
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_alliances")
#endif
public struct RelAlliance: Entity, Equatable, Hashable {
    /// A one-letter alliance code, such as `N`: the primary key (column `code`).
    @PrimaryKey public var code: String
    /// The alliance's name.
    public var name: String

    /// Creates an alliance.
    public init(code: String, name: String) {
        self.code = code
        self.name = name
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_alliances`, keyed by `code`.
        public static let schema = Schema<RelAlliance>("rel_alliances", primaryKey: \.code) {
            Column(\.code, "code")
            Column(\.name, "name")
        }
    #endif

    /// The member airports, through the ``RelMembership`` join rows.
    public static let airports = ManyToMany(through: RelMembership.alliance, to: RelMembership.airport)
    /// The relations stores check and enforce for this entity: ``RelAlliance/airports``.
    public static var relations: [any Relation<RelAlliance>] { [airports] }
}

/// The join entity of airports and alliances, keyed by both columns.
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_memberships")
#endif
public struct RelMembership: Entity, Equatable, Hashable {
    /// The ICAO code of the member ``RelAirport``: the first key column (column `airport`).
    @PrimaryKey public var airport: String
    /// The code of the ``RelAlliance``: the second key column (column `alliance`).
    @PrimaryKey public var alliance: String

    /// Creates a membership.
    public init(airport: String, alliance: String) {
        self.airport = airport
        self.alliance = alliance
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_memberships`, keyed by `airport`, then `alliance`.
        public static let schema = Schema<RelMembership>("rel_memberships", primaryKey: \.airport, \.alliance) {
            Column(\.airport, "airport")
            Column(\.alliance, "alliance")
        }
    #endif

    /// The member ``RelAirport``, through the `airport` column; removing the airport removes its
    /// memberships (`.cascade`).
    public static let airport = ToOne<RelMembership, RelAirport>(\.airport, onDelete: .cascade)
    /// The ``RelAlliance``, through the `alliance` column; an alliance with members cannot be removed
    /// (`.deny`).
    public static let alliance = ToOne<RelMembership, RelAlliance>(\.alliance, onDelete: .deny)
    /// The relations stores check and enforce for this entity: `airport` and `alliance`.
    public static var relations: [any Relation<RelMembership>] { [airport, alliance] }
}

/// An employee with an optional manager: a relation of a table to itself, for the case that a cascade
/// ends even on a cycle.
#if DEPOT_MACRO_FIXTURES
    @Entity("rel_employees")
#endif
public struct RelEmployee: Entity, Equatable, Hashable {
    /// The primary key (column `id`).
    @PrimaryKey public var id: Int
    /// The `id` of the employee's manager; `nil` for none (column `manager`).
    public var manager: Int?

    /// Creates an employee.
    public init(id: Int, manager: Int?) {
        self.id = id
        self.manager = manager
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `rel_employees`, keyed by `id`.
        public static let schema = Schema<RelEmployee>("rel_employees", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.manager, "manager")
        }
    #endif

    /// The employee's manager, through the `manager` column; removing a manager removes their
    /// reports, down the chain (`.cascade`).
    public static let manager = ToOne<RelEmployee, RelEmployee>(\.manager, onDelete: .cascade)
    /// The employees reporting to this one: the to-many inverse of the static `manager` relation.
    public static let reports = ToMany(RelEmployee.manager)
    /// The relations stores check and enforce for this entity: `manager` and
    /// ``RelEmployee/reports``.
    public static var relations: [any Relation<RelEmployee>] { [manager, reports] }
}

/// A relation whose target does not declare the inverse: a declaration error, which every call on
/// its repository and opening a store with it report.
public struct RelOrphanReference: Entity, Equatable {
    /// The primary key (column `id`).
    public var id: Int
    /// The code of a ``RelCountry`` (column `country`).
    public var country: String

    /// Table `rel_orphans`, keyed by `id`.
    public static let schema = Schema<RelOrphanReference>("rel_orphans", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.country, "country")
    }

    /// A to-one relation to ``RelCountry``, which lists no inverse of it: the declaration error.
    public static let country = ToOne<RelOrphanReference, RelCountry>(\.country)
    /// Declares its only relation, `country`, which every call rejects.
    public static var relations: [any Relation<RelOrphanReference>] { [country] }
}

/// A relation whose key column's type differs from the target's key: a declaration error, reported
/// with the misuse of `.nullify` on a non-optional key.
public struct RelMistypedReference: Entity, Equatable {
    /// The primary key (column `id`).
    public var id: Int
    /// An integer key for a ``RelAirport``, whose key `icao` is text: the first declaration error.
    public var airport: Int

    /// Table `rel_mistyped`, keyed by `id`.
    public static let schema = Schema<RelMistypedReference>("rel_mistyped", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.airport, "airport")
    }

    /// A to-one relation to ``RelAirport`` over `airport`; `.nullify` on a non-optional key is the second
    /// declaration error.
    public static let airport = ToOne<RelMistypedReference, RelAirport>(\.airport, onDelete: .nullify)
    /// Declares its only relation, `airport`, which every call rejects.
    public static var relations: [any Relation<RelMistypedReference>] { [airport] }
}

/// A small graph of related rows, stored by `Store.seededRelations()`, with the edge cases the
/// relation cases need: a country without airports, an alliance without members, an unbased pilot.
public enum RelationSample {
    /// Four countries: Norway, Iceland and the United States, and Antarctica (`AQ`), which has no airports.
    public static let countries = [
        RelCountry(code: "NO", name: "Norway", continent: "EU"),
        RelCountry(code: "IS", name: "Iceland", continent: "EU"),
        RelCountry(code: "US", name: "United States", continent: "NA"),
        RelCountry(code: "AQ", name: "Antarctica", continent: "AN"),
    ]
    /// Seven airports: three in Norway, one in Iceland and three in the United States; only `KXXX` is
    /// `small`, and `ENSB` and `KXXX` belong to no alliance.
    public static let airports = [
        RelAirport(icao: "ENGM", name: "Oslo", country: "NO", kind: "large", elevation: 681),
        RelAirport(icao: "ENBR", name: "Bergen", country: "NO", kind: "medium", elevation: 170),
        RelAirport(icao: "ENSB", name: "Svalbard", country: "NO", kind: "medium", elevation: 88),
        RelAirport(icao: "BIKF", name: "Keflavik", country: "IS", kind: "large", elevation: 171),
        RelAirport(icao: "KJFK", name: "Kennedy", country: "US", kind: "large", elevation: 13),
        RelAirport(icao: "KDEN", name: "Denver", country: "US", kind: "large", elevation: 5434),
        RelAirport(icao: "KXXX", name: "Strip", country: "US", kind: "small", elevation: 5),
    ]
    /// Seven runways of four airports, stored out of position order (`KDEN` holds positions 3, 1, 2).
    public static let runways = [
        RelRunway(id: 1, airport: "ENGM", length: 3600, position: 2),
        RelRunway(id: 2, airport: "ENGM", length: 2950, position: 1),
        RelRunway(id: 3, airport: "ENBR", length: 2990, position: 1),
        RelRunway(id: 4, airport: "KDEN", length: 4877, position: 3),
        RelRunway(id: 5, airport: "KDEN", length: 3658, position: 1),
        RelRunway(id: 6, airport: "KDEN", length: 3658, position: 2),
        RelRunway(id: 7, airport: "KJFK", length: 4423, position: 1),
    ]
    /// Four pilots: two based at `ENGM`, one at `ENBR`, and `Cy` unbased.
    public static let pilots = [
        RelPilot(id: 1, name: "Ada", base: "ENGM"),
        RelPilot(id: 2, name: "Bo", base: "ENBR"),
        RelPilot(id: 3, name: "Cy", base: nil),
        RelPilot(id: 4, name: "Di", base: "ENGM"),
    ]
    /// Three alliances: `N` (Nordic), `H` (Hubs) and `E` (Empty), which has no members.
    public static let alliances = [
        RelAlliance(code: "N", name: "Nordic"),
        RelAlliance(code: "H", name: "Hubs"),
        RelAlliance(code: "E", name: "Empty"),
    ]
    /// Six memberships: `N` holds `ENGM`, `ENBR` and `BIKF`; `H` holds `ENGM`, `KJFK` and `KDEN`.
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
    /// Stores ``RelationSample`` in one transaction, parents first.
    ///
    /// - Throws: The store's error if a row cannot be written (say, it is stored already); nothing of
    ///   the sample is written then.
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
