import Depot
import DepotSQL
import Synchronization
import Testing

/// Tests one migration step the way it will meet users' databases: a database at version `k`
/// (built by the same steps), rows written there, then the step to `k + 1`.
///
/// ```swift
/// let store = try SQLiteStore.temporary()
/// try await MigrationHarness.step(appMigrations, to: 4, on: store) { tx in
///     try await tx.repository(AirportV3.self).insert(samples)   // rows as version 3 stores them
/// }
/// #expect(try await store.repository(AirportV4.self).fetchAll() == expected)
/// ```
public enum MigrationHarness {
    /// Migrates `store` to `version - 1`, runs `seed` in one transaction, then migrates to
    /// `version`; returns what the last migration did.
    ///
    /// - Parameters:
    ///   - migrations: The app's full migration list.
    ///   - version: The version whose step is under test (1-based); the database is built up to the
    ///     one before it.
    ///   - store: The store to migrate, normally new and empty.
    ///   - seed: Writes rows as the previous version stores them, in one transaction.
    /// - Returns: What the migration to `version` did (`MigrationOutcome`): normally that one step.
    /// - Throws: A migration error (the step names itself in it), or what `seed` throws.
    @discardableResult
    public static func step(
        _ migrations: Migrations, to version: Int, on store: some MigratableStore,
        seed: @escaping @Sendable (Transaction) async throws -> Void
    ) async throws -> MigrationOutcome {
        try await store.migrate(migrations, to: version - 1)
        try await store.write { tx in try await seed(tx) }
        return try await store.migrate(migrations, to: version)
    }
}

// MARK: - The conformance cases

/// One migration behaviour every migratable store must have. `open` gives a new store instance
/// on the same fresh database each time it is called (the first is the store under test).
///
/// Take the cases from ``MigrationConformance/cases`` and run each with ``MigrationCase/run(open:)``
/// on a database of its own; leave out the ``MigrationCase/needsSQL`` cases on a store without SQL.
public struct MigrationCase: Sendable, CustomStringConvertible {
    /// What the case pins down; it labels the test's argument.
    public let name: String
    /// Whether the case runs raw SQL steps (SQL stores only).
    public let needsSQL: Bool
    let body: @Sendable (_ open: @Sendable () async throws -> any MigratableStore) async throws -> Void

    init(
        _ name: String, needsSQL: Bool = false,
        _ body: @escaping @Sendable (_ open: @Sendable () async throws -> any MigratableStore) async throws -> Void
    ) {
        self.name = name
        self.needsSQL = needsSQL
        self.body = body
    }

    /// The case's ``MigrationCase/name``, which Swift Testing shows as the test's argument.
    public var description: String { name }

    /// Runs the case; `open` opens the same empty database anew on each call.
    ///
    /// - Parameter open: Returns a store on the case's database: the store under test on the first
    ///   call, and on later calls another instance on the same database (as another process would
    ///   open it). A store with one database in memory may return the same instance every time.
    /// - Throws: Errors the case did not expect from the store, or from a failed `#require`. Failed
    ///   `#expect`s are recorded as issues of the running test instead.
    public func run(open: @escaping @Sendable () async throws -> any MigratableStore) async throws {
        try await body(open)
    }
}

struct PortV1: Entity, Equatable {
    var code: String
    var name: String
    var elevation: Int

    static let schema = Schema<PortV1>("ports", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.name, "name")
        Column(\.elevation, "elevation")
    }
}

struct PortV2: Entity, Equatable {
    var code: String
    var name: String
    var elevation: Int
    var country: String

    static let schema = Schema<PortV2>("ports", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.name, "name")
        Column(\.elevation, "elevation")
        Column(\.country, "country")
    }
}

/// After renaming the table and a column, and making elevation a nullable double.
struct TextPort: Entity, Equatable {
    var code: String
    var name: String
    var elevation: String

    static let schema = Schema<TextPort>("ports", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.name, "name")
        Column(\.elevation, "elevation")
    }
}

/// `ports` with a floating-point elevation.
struct DoublePort: Entity, Equatable {
    var code: String
    var name: String
    var elevation: Double

    static let schema = Schema<DoublePort>("ports", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.name, "name")
        Column(\.elevation, "elevation")
    }
}

struct HarbourV5: Entity, Equatable {
    var code: String
    var title: String
    var elevation: Double?
    var country: String

    static let schema = Schema<HarbourV5>("harbours", primaryKey: \.code) {
        Column(\.code, "code")
        Column(\.title, "title")
        Column(\.elevation, "elevation")
        Column(\.country, "country")
    }
}

extension MigrationConformance {
    static let createPorts = Migration("1 ports", [.createTable(PortV1.self)])
    static let addCountry = Migration(
        "2 country", [.addColumn("country", .text, to: "ports", default: .text("ZZ"))])
    static let indexCountry = Migration(
        "3 country index", [.createIndex("ports_country", on: "ports", columns: ["country", "code"])])
    static let renames = Migration(
        "4 harbours", [.renameTable("ports", to: "harbours"), .renameColumn("name", to: "title", in: "harbours")])
    static let alter = Migration(
        "5 elevation double", [.alterColumn("elevation", to: .double, nullable: true, in: "harbours")],
        down: .operations([.alterColumn("elevation", to: .integer, nullable: false, in: "harbours")]))
    static let all = Migrations([createPorts, addCountry, indexCountry, renames, alter])
    /// The suite's migration list (tables, columns, renames, a composite unique index, a type
    /// change), for comparing what it builds on different stores.
    public static var sample: Migrations { all }
    static let oslo = PortV1(code: "ENGM", name: "Oslo", elevation: 681)
    static let bergen = PortV1(code: "ENBR", name: "Bergen", elevation: 170)
}

/// The migration conformance suite: the same steps give the same database on every store.
///
/// A migratable store's test target runs each case on a new database. The in-memory store, which
/// cannot run raw SQL, leaves out the SQL cases and hands out its one instance:
///
/// ```swift
/// import Depot
/// import DepotTesting
/// import Testing
///
/// @Test(arguments: MigrationConformance.cases.filter { !$0.needsSQL })
/// func migrations(_ check: MigrationCase) async throws {
///     let store = InMemoryStore()
///     try await check.run { store }
/// }
/// ```
///
/// A store on a database file or server opens a new instance on the case's database on each call,
/// such as `try await check.run { try SQLiteStore(path: path) }` with a new `path` per case.
/// ``MigrationHarness`` tests an app's own steps the same way, one at a time.
public enum MigrationConformance {
    /// Every case of the suite: applying, reverting and refusing steps, the ledger, schema checks,
    /// raw SQL (``MigrationCase/needsSQL``) and two stores migrating one database at once.
    public static var cases: [MigrationCase] { coreCases + proposalCases + searchLifecycleCases }

    static let coreCases: [MigrationCase] = [
        MigrationCase("a new database reaches the latest version step by step, each recorded in the ledger") { open in
            let store = try await open()
            let seen = ProgressLog()
            let outcome = try await store.migrate(all, progress: { seen.append($0) })
            #expect(outcome == MigrationOutcome(from: 0, to: 5, steps: all.steps.map(\.name)))
            #expect(seen.values.map(\.done) == [1, 2, 3, 4, 5] && seen.values.allSatisfy { $0.total == 5 })
            let ledger = try await store.appliedMigrations()
            #expect(ledger.map(\.version) == [1, 2, 3, 4, 5])
            #expect(ledger.map(\.name) == all.steps.map(\.name))
            #expect(ledger.map(\.checksum) == all.steps.map(\.checksum))
            let harbours = store.repository(HarbourV5.self)
            try await harbours.insert(HarbourV5(code: "ENGM", title: "Oslo", elevation: 204.5, country: "NO"))
            #expect(try await harbours.find("ENGM")?.elevation == 204.5)
            // Migrating again does nothing.
            #expect(try await store.migrate(all).steps.isEmpty)
        },
        MigrationCase(
            "a data step reading in batches reports its rows after each batch, then the step as finished"
        ) { open in
            let store = try await open()
            try await store.migrate(all, to: 1)
            let ports = (0..<25).map { PortV1(code: "P\($0 + 10)", name: "Port \($0)", elevation: $0) }
            try await store.repository(PortV1.self).insert(ports)
            let raise = Migration(
                "2 raise every port",
                [
                    .data("raise") { tx in
                        let repository = tx.repository(PortV1.self)
                        for try await batch in repository.batches(of: 10) {
                            try await repository.upsert(
                                batch.map { PortV1(code: $0.code, name: $0.name, elevation: $0.elevation + 1) })
                        }
                    }
                ], down: .irreversible)
            let seen = ProgressLog()
            try await store.migrate(Migrations([createPorts, raise]), progress: { seen.append($0) })
            let expected = [10, 20, 25].map {
                MigrationProgress(
                    done: 0, total: 1, step: "2 raise every port", rows: MigrationProgress.Rows(done: $0, total: 25))
            }
            #expect(seen.values == expected + [MigrationProgress(done: 1, total: 1, step: "2 raise every port")])
            #expect(try await store.repository(PortV1.self).fetch().map(\.elevation).sorted() == Array(1...25))
            // Without a progress closure nothing counts the rows (and nothing is reported).
            let quiet = Migrations([createPorts, raise, addCountry])
            #expect(try await store.migrate(quiet).steps == ["2 country"])
        },
        MigrationCase("a database at version k gets steps k+1…n, its rows carried through each") { open in
            let store = try await open()
            try await store.migrate(all, to: 1)
            try await store.repository(PortV1.self).insert([oslo, bergen])
            let outcome = try await store.migrate(all)
            #expect(outcome.from == 1 && outcome.to == 5 && outcome.steps.count == 4)
            let harbours = try await store.repository(HarbourV5.self).fetch(orderBy: [.ascending(\.code)])
            #expect(
                harbours == [
                    HarbourV5(code: "ENBR", title: "Bergen", elevation: 170, country: "ZZ"),
                    HarbourV5(code: "ENGM", title: "Oslo", elevation: 681, country: "ZZ"),
                ])
        },
        MigrationCase("the per-step harness builds version k with rows, then applies step k+1") { open in
            let store = try await open()
            let outcome = try await MigrationHarness.step(all, to: 2, on: store) { tx in
                try await tx.repository(PortV1.self).insert(oslo)
            }
            #expect(outcome.steps == ["2 country"])
            #expect(try await store.repository(PortV2.self).find("ENGM")?.country == "ZZ")
        },
        MigrationCase("a step that throws leaves the previous version and names the step") { open in
            let store = try await open()
            let failing = Migration(
                "2 country, then a failing data step",
                [
                    .addColumn("country", .text, to: "ports", default: .text("ZZ")),
                    .data("fails") { _ in throw DepotError(.invalidQuery, "no luck") },
                ])
            try await store.migrate(all, to: 1)
            try await store.repository(PortV1.self).insert(oslo)
            let error = await #expect(throws: DepotError.self) {
                try await store.migrate(Migrations([createPorts, failing]))
            }
            #expect(error?.kind == .migration)
            #expect(error?.message.contains("step 2 '2 country, then a failing data step' failed") == true)
            #expect(error?.message.contains("no luck") == true)
            #expect(try await store.appliedMigrations().count == 1)
            // The column was not added: the fixed step applies cleanly.
            try await store.migrate(all, to: 2)
            #expect(
                try await store.repository(PortV2.self).fetchAll() == [
                    PortV2(code: "ENGM", name: "Oslo", elevation: 681, country: "ZZ")
                ])
        },
        MigrationCase("two steps with one name are refused by name before anything runs") { open in
            let store = try await open()
            let twin = Migration("1 ports", [.addColumn("country", .text, to: "ports", default: .text("ZZ"))])
            let error = await #expect(throws: DepotError.self) {
                try await store.migrate(Migrations([createPorts, twin]))
            }
            #expect(error?.kind == .migration)
            #expect(
                error?.message.contains("two migration steps are named '1 ports'") == true, "\(error?.message ?? "")")
            #expect(try await store.appliedMigrations().isEmpty)
        },
        MigrationCase("a database from a newer app (unknown steps in its ledger) is refused, unchanged") { open in
            let store = try await open()
            try await store.migrate(all, to: 3)
            let error = await #expect(throws: DepotError.self) {
                try await store.migrate(Migrations([createPorts, addCountry]))
            }
            #expect(error?.message.contains("newer than this app's 2") == true)
            #expect(error?.message.contains("'3 country index'") == true)
            #expect(try await store.appliedMigrations().count == 3)
        },
        MigrationCase("a step edited after it was applied is reported by its checksum") { open in
            let store = try await open()
            try await store.migrate(all, to: 2)
            let edited = Migration("2 country", [.addColumn("country", .text, to: "ports", default: .text("XX"))])
            let error = await #expect(throws: DepotError.self) {
                try await store.migrate(Migrations([createPorts, edited]))
            }
            #expect(error?.message.contains("'2 country' changed after it was applied") == true)
        },
        MigrationCase("down reverts steps last first; up, down and up again give the same database") { open in
            let store = try await open()
            try await store.migrate(all, to: 1)
            try await store.repository(PortV1.self).insert([oslo, bergen])
            try await store.migrate(all)
            let down = try await store.migrate(all, to: 1)
            #expect(down.steps == ["5 elevation double", "4 harbours", "3 country index", "2 country"])
            #expect(try await store.appliedMigrations().count == 1)
            #expect(try await store.repository(PortV1.self).fetch(orderBy: [.ascending(\.code)]) == [bergen, oslo])
            try await store.migrate(all)
            #expect(try await store.repository(HarbourV5.self).count() == 2)
            try await store.repository(HarbourV5.self).insert(
                HarbourV5(code: "ESSA", title: "Arlanda", elevation: nil, country: "SE"))
        },
        MigrationCase("drop index and drop table steps remove them; going down to 0 leaves no table") { open in
            let store = try await open()
            try await store.migrate(all)
            try await store.migrate(all, to: 0)
            let gone = await #expect(throws: DepotError.self) { try await store.checkSchema(of: [PortV1.self]) }
            #expect(gone?.message.contains("table 'ports' of PortV1 does not exist") == true)
            let steps = Migrations([
                createPorts, addCountry, indexCountry, Migration("4 no index", [.dropIndex("ports_country")]),
                Migration("5 no ports", [.dropTable("ports")]),
            ])
            try await store.migrate(steps, to: 4)
            try await store.repository(PortV2.self).insert(
                PortV2(code: "ENGM", name: "Oslo", elevation: 681, country: "NO"))
            try await store.migrate(steps)
            let dropped = await #expect(throws: DepotError.self) { try await store.checkSchema(of: [PortV2.self]) }
            #expect(dropped?.message.contains("table 'ports' of PortV2 does not exist") == true)
            #expect(try await store.appliedMigrations().count == 5)
        },
        MigrationCase("migrating below an irreversible step fails, naming it, and changes nothing") { open in
            let store = try await open()
            let steps = Migrations([
                createPorts, Migration("2 drop", [.dropColumn("elevation", from: "ports")]),
            ])
            try await store.migrate(steps)
            let error = await #expect(throws: DepotError.self) { try await store.migrate(steps, to: 0) }
            #expect(error?.message.contains("step 2 '2 drop' is irreversible") == true)
            #expect(try await store.appliedMigrations().count == 2)
        },
        MigrationCase("a column cannot become NOT NULL or numeric while values forbid it; nothing changes") { open in
            let store = try await open()
            try await store.migrate(all)
            let harbours = store.repository(HarbourV5.self)
            try await harbours.insert(HarbourV5(code: "ENGM", title: "Oslo", elevation: nil, country: "NO"))
            let error = await #expect(throws: DepotError.self) { try await store.migrate(all, to: 4) }
            #expect(error?.message.contains("cannot become NOT NULL: 1 row(s) hold NULL") == true)
            #expect(try await store.appliedMigrations().count == 5)
            try await harbours.upsert(HarbourV5(code: "ENGM", title: "Oslo", elevation: 204.5, country: "NO"))
            let fraction = await #expect(throws: DepotError.self) { try await store.migrate(all, to: 4) }
            #expect(fraction?.message.contains("cannot become integer: 1 value(s) do not convert") == true)
            #expect(try await harbours.find("ENGM")?.elevation == 204.5)
        },
        MigrationCase("text becomes a number only when it spells one, to the same value on every store") { open in
            let store = try await open()
            let toText = Migration("2 text", [.alterColumn("elevation", to: .text, nullable: false, in: "ports")])
            let toInteger = Migration(
                "3 integer", [.alterColumn("elevation", to: .integer, nullable: false, in: "ports")])
            let toDouble = Migration("3 double", [.alterColumn("elevation", to: .double, nullable: false, in: "ports")])
            try await store.migrate(Migrations([createPorts, toText]))
            let texts = store.repository(TextPort.self)
            let good: [(String, Int)] = [
                ("12", 12), ("+5", 5), ("-0", 0), ("12.0", 12), ("1e3", 1000), ("-0.5e1", -5), ("2.5E+2", 250),
                ("9007199254740993", 9_007_199_254_740_993),
            ]
            try await texts.insert(
                good.enumerated().map { TextPort(code: "P\($0.offset)", name: "", elevation: $0.element.0) })
            // SQLite's CAST alone reads '1e3' as 1 and 'nan' as 0; Swift's Double reads '0x10' as 16.
            for bad in ["nan", "inf", "0x10", " 12", "12.5", "1e30", "", "1e", ".", "1,5"] {
                try await texts.upsert(TextPort(code: "BAD", name: "", elevation: bad))
                let error = await #expect(throws: DepotError.self, "'\(bad)'") {
                    try await store.migrate(Migrations([createPorts, toText, toInteger]))
                }
                #expect(
                    error?.message.contains("cannot become integer: 1 value(s) do not convert (e.g. '\(bad)')") == true,
                    "\(error?.message ?? "")")
                #expect(try await texts.find("BAD")?.elevation == bad, "nothing changed")
            }
            for bad in ["nan", "inf", "-Infinity", "0x10", "1e400"] {
                try await texts.upsert(TextPort(code: "BAD", name: "", elevation: bad))
                let error = await #expect(throws: DepotError.self, "'\(bad)'") {
                    try await store.migrate(Migrations([createPorts, toText, toDouble]))
                }
                #expect(error?.message.contains("cannot become double") == true, "\(error?.message ?? "")")
            }
            #expect(try await texts.remove("BAD"))
            try await store.migrate(Migrations([createPorts, toText, toInteger]))
            let ports = try await store.repository(PortV1.self).fetch(orderBy: [.ascending(\.code)])
            #expect(ports.map(\.elevation) == good.map(\.1))
            // And back to text, then to double: the same numbers as floating point.
            try await store.migrate(
                Migrations([createPorts, toText, toInteger, Migration("4 text", toText.operations)]))
            try await texts.upsert(TextPort(code: "P9", name: "", elevation: "1.25e-1"))
            try await store.migrate(
                Migrations([
                    createPorts, toText, toInteger, Migration("4 text", toText.operations),
                    Migration("5 double", toDouble.operations),
                ]))
            let doubles = try await store.repository(DoublePort.self).fetch(orderBy: [.ascending(\.code)])
            #expect(doubles.map(\.elevation) == good.map { Double($0.1) } + [0.125])
        },
        MigrationCase("a step on a missing or taken name fails with the same words on every store; nothing changes") {
            open in
            let store = try await open()
            try await store.migrate(Migrations([createPorts, addCountry]))
            try await store.repository(PortV1.self).insert(oslo)
            let refused: [(MigrationOperation, String)] = [
                (.renameColumn("name", to: "country", in: "ports"), "table 'ports' has a column 'country' already"),
                (.renameColumn("title", to: "heading", in: "ports"), "table 'ports' has no column 'title'"),
                (
                    .addColumn("name", .text, to: "ports", default: .text("x")),
                    "table 'ports' has a column 'name' already"
                ),
                (.dropColumn("title", from: "ports"), "table 'ports' has no column 'title'"),
                (.dropColumn("name", from: "quays"), "no table 'quays'"),
                (.renameTable("ports", to: "ports"), "table 'ports' exists already"),
            ]
            for (operation, words) in refused {
                let error = await #expect(throws: DepotError.self, "\(operation)") {
                    try await store.migrate(Migrations([createPorts, addCountry, Migration("3 refused", [operation])]))
                }
                #expect(error?.message.hasSuffix(words) == true, "\(error?.message ?? "")")
            }
            #expect(try await store.appliedMigrations().count == 2)
            #expect(try await store.repository(PortV1.self).find(oslo.code) == oslo)
        },
        MigrationCase("a unique composite index created by a step rejects duplicates") { open in
            let store = try await open()
            let steps = Migrations([
                createPorts,
                Migration(
                    "2 unique name",
                    [.createIndex("ports_name", on: "ports", columns: ["name", "elevation"], unique: true)]),
            ])
            try await store.migrate(steps)
            let ports = store.repository(PortV1.self)
            try await ports.insert(oslo)
            let error = await #expect(throws: DepotError.self) {
                try await ports.insert(PortV1(code: "XXXX", name: "Oslo", elevation: 681))
            }
            #expect(error?.kind == .constraintViolation)
            try await ports.insert(PortV1(code: "YYYY", name: "Oslo", elevation: 1))
        },
        MigrationCase("raw SQL steps run the text of the store's dialect", needsSQL: true) { open in
            let store = try await open()
            let steps = Migrations([
                createPorts,
                Migration(
                    "2 seed",
                    [
                        .sql(
                            sqlite: "INSERT INTO ports (code, name, elevation) VALUES ('ENGM', 'Oslo', 681)",
                            postgres: "INSERT INTO ports (code, name, elevation) VALUES ('ENGM', 'Oslo', 681)"
                        )
                    ]),
            ])
            try await store.migrate(steps)
            #expect(try await store.repository(PortV1.self).fetchAll() == [oslo])
        },
        MigrationCase(
            "a raw SQL step is a script: semicolons in literals, quoted names, comments and function bodies stay",
            needsSQL: true
        ) { open in
            let store = try await open()
            let steps = Migrations([
                createPorts,
                Migration(
                    "2 seed",
                    [
                        .sql(
                            sqlite: """
                                CREATE TABLE "semi;colon" (v TEXT); -- a comment; with a semicolon
                                CREATE TRIGGER ports_seed AFTER INSERT ON "semi;colon" BEGIN
                                  INSERT INTO ports (code, name, elevation) VALUES (NEW.v, 'Oslo;Gardermoen', 681);
                                END;
                                INSERT INTO "semi;colon" (v) VALUES ('ENGM');
                                """,
                            postgres: """
                                CREATE TABLE "semi;colon" (v text); -- a comment; with a semicolon
                                CREATE FUNCTION ports_seed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                                  INSERT INTO ports (code, name, elevation)
                                    VALUES (NEW.v, 'Oslo;Gardermoen', 681); RETURN NULL; END $$;
                                CREATE TRIGGER ports_seed AFTER INSERT ON "semi;colon"
                                  FOR EACH ROW EXECUTE FUNCTION ports_seed();
                                INSERT INTO "semi;colon" (v) VALUES ('ENGM');
                                """)
                    ]),
            ])
            try await store.migrate(steps)
            var expected = oslo
            expected.name = "Oslo;Gardermoen"
            #expect(try await store.repository(PortV1.self).fetchAll() == [expected])
            let found = try await store.repository(PortV1.self).fetch(
                where: .contains(\.name, "OSLO;", .caseInsensitive))
            #expect(found.map(\.code) == ["ENGM"])
        },
        MigrationCase("after migrating, the schema is compared with the entities; each difference is listed") { open in
            let store = try await open()
            try await store.migrate(all)
            try await store.checkSchema(of: [HarbourV5.self])
            // Going down through a rebuild (step 5) keeps the other columns' defaults.
            try await store.migrate(all, to: 2)
            try await store.checkSchema(of: [PortV1.self, PortV2.self])
            try await store.repository(PortV1.self).insert(oslo)
            #expect(try await store.repository(PortV2.self).find("ENGM")?.country == "ZZ")
            try await store.migrate(all, to: 1)
            let error = await #expect(throws: DepotError.self) {
                try await store.checkSchema(of: [HarbourV5.self, PortV2.self])
            }
            #expect(error?.kind == .schemaMismatch)
            #expect(error?.message.contains("(2 table(s))") == true)
            #expect(error?.message.contains("table 'harbours' of HarbourV5 does not exist") == true)
            // The column's type is named in the store's dialect (TEXT, text).
            #expect(error?.message.lowercased().contains("column country: expected text, found no column") == true)
        },
        MigrationCase("open migrates and checks the entities; changed steps or drifted tables fail by default") {
            open in
            let store = try await open()
            let early = Migrations([createPorts])
            try await store.open(early, entities: [PortV1.self])
            try await store.repository(PortV1.self).insert(oslo)
            // The app now declares a country the database lacks: drift, named at launch.
            let drift = await #expect(throws: DepotError.self) {
                try await store.open(early, entities: [PortV2.self])
            }
            #expect(drift?.kind == .schemaMismatch)
            #expect(drift?.message.contains("country") == true)
            // A first step edited since it was applied: refused, data kept.
            let edited = Migrations([Migration("1 ports", [.createTable(PortV2.self)])])
            let history = await #expect(throws: DepotError.self) {
                try await store.open(edited, entities: [PortV2.self])
            }
            #expect(history?.kind == .migration)
            #expect(try await store.repository(PortV1.self).fetchAll() == [oslo])
            // Relations are checked too, before anything runs.
            let relation = await #expect(throws: DepotError.self) {
                try await store.open(early, entities: [PortV1.self, RelOrphanReference.self])
            }
            #expect(relation?.kind == .invalidSchema)
        },
        MigrationCase("open with eraseAndRecreate starts over when the steps or the tables changed") { open in
            let store = try await open()
            try await store.open(Migrations([createPorts]), entities: [PortV1.self])
            try await store.repository(PortV1.self).insert([oslo, bergen])
            let edited = Migrations([Migration("1 ports", [.createTable(PortV2.self)])])
            let outcome = try await store.open(edited, entities: [PortV2.self], onSchemaChange: .eraseAndRecreate)
            #expect(outcome.steps == ["1 ports"])
            #expect(try await store.appliedMigrations().map(\.name) == ["1 ports"])
            #expect(try await store.repository(PortV2.self).count() == 0, "the old rows went with the old schema")
            try await store.repository(PortV2.self).insert(
                PortV2(code: "ENGM", name: "Oslo", elevation: 681, country: "NO"))
            // Nothing changed: opening again keeps the data.
            try await store.open(edited, entities: [PortV2.self], onSchemaChange: .eraseAndRecreate)
            #expect(try await store.repository(PortV2.self).count() == 1)
        },
        MigrationCase("a column altered to text is filled for case-insensitive search, every row") { open in
            let store = try await open()
            try await store.migrate(Migrations([createPorts]))
            let many = (0..<12_000).map { PortV1(code: "P\($0)", name: "Port \($0)", elevation: $0) }
            try await store.repository(PortV1.self).insert(many)
            try await store.migrate(
                Migrations([
                    createPorts,
                    Migration("2 text", [.alterColumn("elevation", to: .text, nullable: false, in: "ports")]),
                ]))
            let ports = store.repository(TextPort.self)
            #expect(try await ports.count(where: .hasPrefix(\.elevation, "1199", .caseInsensitive)) == 11)
            #expect(
                try await ports.count(where: .contains(\.elevation, "0", .caseInsensitive))
                    == many.count { String($0.elevation).contains("0") })
        },
        MigrationCase("a text default with quotes and backslashes fills existing rows exactly as written") {
            open in
            let store = try await open()
            let text = #"C:\new\table 'quoted' \' \\"#
            try await store.migrate(Migrations([createPorts]))
            try await store.repository(PortV1.self).insert(oslo)
            try await store.migrate(
                Migrations([
                    createPorts,
                    Migration("2 country", [.addColumn("country", .text, to: "ports", default: .text(text))]),
                ]))
            #expect(try await store.repository(PortV2.self).fetchAll().map(\.country) == [text])
        },
        MigrationCase("adding a foreign key fails on dangling rows, naming them, and passes once they are gone") {
            open in
            let store = try await open()
            let tables = Migration(
                "1 countries and airports", [.createTable(RelCountry.self), .createTable(RelAirport.self)])
            try await store.migrate(Migrations([tables]))
            let airports = RelAirport.schema.table
            // Rows written before the relation existed (plain batches: no relation checks).
            try await store.transaction { writer in
                try await writer.write(
                    RowBatch(
                        columns: ["code", "name", "continent"], values: [.text("NO"), .text("Norway"), .text("EU")]),
                    into: RelCountry.schema.table, mode: .insert)
                try await writer.write(
                    RowBatch(
                        columns: ["icao", "name", "country", "kind", "elevation"],
                        values: [
                            .text("ENGM"), .text("Oslo"), .text("NO"), .text("large"), .integer(681),
                            .text("EDDF"), .text("Frankfurt"), .text("DE"), .text("large"), .integer(364),
                            .text("EGLL"), .text("Heathrow"), .text("GB"), .text("large"), .integer(83),
                        ]), into: airports, mode: .insert)
            }
            let steps = Migrations([tables, Migration("2 airport countries", [.addForeignKey(RelAirport.country)])])
            let error = await #expect(throws: DepotError.self) { try await store.migrate(steps) }
            #expect(
                error?.message.hasSuffix(
                    "2 rel_airports row(s) name no RelCountry in country (relation RelAirport.country): "
                        + "'EDDF' → 'DE', 'EGLL' → 'GB'") == true, "\(error?.message ?? "")")
            #expect(error?.message.hasPrefix("step 2 '2 airport countries' failed") == true)
            #expect(try await store.appliedMigrations().count == 1)
            _ = try await store.transaction { writer in
                try await writer.delete(from: airports, where: .isIn(column: "country", [.text("DE"), .text("GB")]))
            }
            try await store.migrate(steps)
            #expect(try await store.appliedMigrations().count == 2)
        },
        MigrationCase("two stores migrating one database at once apply each step exactly once") { open in
            let first = try await open()
            let second = try await open()
            let counted = Migrations([
                createPorts,
                Migration(
                    "2 seed once",
                    [.data("insert Oslo") { tx in try await tx.repository(PortV1.self).insert(oslo) }],
                    down: .irreversible),
                addCountry,
            ])
            async let a = first.migrate(counted)
            async let b = second.migrate(counted)
            let (outcomeA, outcomeB) = try await (a, b)
            #expect(outcomeA.steps.count + outcomeB.steps.count == 3)
            #expect(try await first.appliedMigrations().count == 3)
            #expect(try await second.repository(PortV2.self).count() == 1)
        },
    ]
}

/// Progress reports received, in order.
final class ProgressLog: Sendable {
    private let log = Mutex<[MigrationProgress]>([])
    func append(_ progress: MigrationProgress) { log.withLock { $0.append(progress) } }
    var values: [MigrationProgress] { log.withLock { $0 } }
}
