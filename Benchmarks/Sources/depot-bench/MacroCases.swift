import BenchHarness
import Depot
import DepotSQLite
import Foundation

// The row codec `@Entity` generates (issue #25) against the raw SQLite C API: the same table,
// columns and rows as `BenchAirport`'s hand-written schema, so the raw baseline is the one the
// `insert` and `fetch all` cases use, in the same run, the same way.

/// `BenchAirport` declared with `@Entity`: the same table, column names and column order.
@Entity("airports")
struct MacroAirport: Equatable {
    @PrimaryKey var icao: String
    var iata: String?
    var name: String
    var city: String?
    var country: String
    var elevation: Double
    @Column("lat") var latitude: Double
    @Column("lon") var longitude: Double

    init(_ airport: BenchAirport) {
        icao = airport.icao
        iata = airport.iata
        name = airport.name
        city = airport.city
        country = airport.country
        elevation = airport.elevation
        latitude = airport.latitude
        longitude = airport.longitude
    }
}

enum MacroCases {
    /// Opens the `@Entity` airports' repository on a Depot file store.
    static func openDepot(_ path: String) throws -> Repository<MacroAirport> {
        try SQLiteStore(path: path).repository(MacroAirport.self)
    }

    @MainActor
    static func run(n: Int, rows: [BenchAirport]) async throws -> [BenchResult] {
        let names = (insert: "insert (@Entity)", fetch: "fetch all into structs (@Entity)")
        guard selected(names.insert) || selected(names.fetch) else { return [] }
        let entities = rows.map(MacroAirport.init)
        var results: [BenchResult] = []
        results.appendIfPresent(
            try await compare(
                names.insert, n: n, openSubject: openDepot, subject: { try await $0.insert(entities) },
                openBaseline: RawDatabase.init(path:), baseline: { $0.write(rows, upsert: false) }))
        results.appendIfPresent(
            try await compare(
                names.fetch, n: n, subjectPrepare: { try await openDepot($0).insert(entities) },
                openSubject: openDepot, subject: { _ = try await $0.fetchAll() },
                baselinePrepare: { RawDatabase(path: $0).write(rows, upsert: false) },
                openBaseline: RawDatabase.init(path:),
                baseline: { _ = $0.fetch(RawDatabase.selectAll + " ORDER BY \"icao\"") }))
        return results
    }

    /// `--profile-entity depot|raw PATH N ROUNDS [fetch|insert]`: one side of a case with the
    /// `@Entity` airports, ROUNDS times, for `perf record` without the other side in the samples.
    /// `fetch` seeds PATH once when it does not exist and reads it on one open store; `insert`
    /// writes the N rows into a fresh file each round.
    static func profile(_ arguments: [String]) async throws {
        guard let index = arguments.firstIndex(of: "--profile-entity"), arguments.count > index + 4,
            let n = Int(arguments[index + 3]), let rounds = Int(arguments[index + 4])
        else {
            throw BenchError(description: "usage: --profile-entity depot|raw PATH N ROUNDS [fetch|insert]")
        }
        let depot = arguments[index + 1] == "depot"
        let path = arguments[index + 2]
        let what = arguments.count > index + 5 ? arguments[index + 5] : "fetch"
        var total = 0
        if what == "insert" {
            let rows = replicate(try loadAirports(), count: n)
            let entities = rows.map(MacroAirport.init)
            for round in 0..<rounds {
                let file = "\(path)-\(round)"
                if depot {
                    try await openDepot(file).insert(entities)
                } else {
                    RawDatabase(path: file).write(rows, upsert: false)
                }
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
                total += rows.count
            }
        } else {
            if !FileManager.default.fileExists(atPath: path) {
                RawDatabase(path: path).write(replicate(try loadAirports(), count: n), upsert: false)
            }
            if depot {
                let repository = try openDepot(path)
                for _ in 0..<rounds { total += try await repository.fetchAll().count }
            } else {
                let database = RawDatabase(path: path)
                for _ in 0..<rounds { total += database.fetch(RawDatabase.selectAll + " ORDER BY \"icao\"").count }
            }
        }
        print(total)
    }
}
