import BenchHarness
import Foundation
import GRDB

// What a GRDB user writes: records, Codable or hand-written, through a DatabaseQueue on the same
// file settings (WAL). Measured against the same raw C baseline as Depot, in the same run.

/// The airport as a Codable GRDB record.
struct GRDBCodableAirport: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "airports"
    var icao: String
    var iata: String?
    var name: String
    var city: String?
    var country: String
    var elevation: Double
    var lat: Double
    var lon: Double

    init(_ airport: BenchAirport) {
        icao = airport.icao
        iata = airport.iata
        name = airport.name
        city = airport.city
        country = airport.country
        elevation = airport.elevation
        lat = airport.latitude
        lon = airport.longitude
    }
}

/// The airport as a hand-written GRDB record (columns by index and name, no Codable).
struct GRDBManualAirport: FetchableRecord, PersistableRecord {
    static let databaseTableName = "airports"
    var airport: BenchAirport

    init(_ airport: BenchAirport) { self.airport = airport }

    init(row: Row) throws {
        airport = BenchAirport(
            icao: row[0], iata: row[1], name: row[2], city: row[3], country: row[4], elevation: row[5],
            latitude: row[6], longitude: row[7])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["icao"] = airport.icao
        container["iata"] = airport.iata
        container["name"] = airport.name
        container["city"] = airport.city
        container["country"] = airport.country
        container["elevation"] = airport.elevation
        container["lat"] = airport.latitude
        container["lon"] = airport.longitude
    }
}

enum GRDBCases {
    static func queue(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS \"airports\" (\"icao\" TEXT NOT NULL, \"iata\" TEXT, \"name\" TEXT NOT NULL, "
                    + "\"city\" TEXT, \"country\" TEXT NOT NULL, \"elevation\" REAL NOT NULL, \"lat\" REAL NOT NULL, "
                    + "\"lon\" REAL NOT NULL, PRIMARY KEY (\"icao\"))")
        }
        return queue
    }

    @MainActor
    static func run(n: Int, rows: [BenchAirport], updated: [BenchAirport]) async throws -> [BenchResult] {
        let codable = rows.map(GRDBCodableAirport.init)
        let manual = rows.map(GRDBManualAirport.init)
        let codableUpdated = updated.map(GRDBCodableAirport.init)
        let manualUpdated = updated.map(GRDBManualAirport.init)
        func seedRaw(_ path: String) { RawDatabase(path: path).write(rows, upsert: false) }
        let seedGRDB: @Sendable (String) throws -> Void = { path in
            try queue(path).write { db in for row in manual { try row.insert(db) } }
        }
        var results: [BenchResult] = []
        for (label, subject, work, prepare):
            (String, String, @Sendable (DatabaseQueue) throws -> Void, (@Sendable (String) throws -> Void)?) in [
                (
                    "insert", "grdb-codable-record",
                    { queue in try queue.write { db in for row in codable { try row.insert(db) } } }, nil
                ),
                (
                    "insert", "grdb-manual-record",
                    { queue in try queue.write { db in for row in manual { try row.insert(db) } } }, nil
                ),
                (
                    "upsert over existing", "grdb-codable-record",
                    { queue in try queue.write { db in for row in codableUpdated { try row.upsert(db) } } },
                    seedGRDB
                ),
                (
                    "upsert over existing", "grdb-manual-record",
                    { queue in try queue.write { db in for row in manualUpdated { try row.upsert(db) } } },
                    seedGRDB
                ),
                (
                    "fetch all", "grdb-codable-record",
                    { queue in
                        _ = try queue.read { db in try GRDBCodableAirport.order(Column("icao")).fetchAll(db) }
                    }, seedGRDB
                ),
                (
                    "fetch all", "grdb-manual-record",
                    { queue in
                        _ = try queue.read { db in
                            try GRDBManualAirport.fetchAll(db, sql: RawDatabase.selectAll + " ORDER BY \"icao\"")
                        }
                    }, seedGRDB
                ),
            ]
        {
            let name = "\(label) (\(subject))"
            if !selected(name) { continue }
            let baseline: (RawDatabase) -> Void =
                switch label {
                case "insert": { $0.write(rows, upsert: false) }
                case "upsert over existing": { $0.write(updated, upsert: true) }
                default: { _ = $0.fetch(RawDatabase.selectAll + " ORDER BY \"icao\"") }
                }
            let result = try await compare(
                name, n: n, subjectName: subject, subjectPrepare: { path in try prepare?(path) },
                openSubject: { try queue($0) }, subject: { queue in try work(queue) },
                baselinePrepare: label == "insert" ? { _ in } : seedRaw, openBaseline: RawDatabase.init(path:),
                baseline: baseline)
            if let result { results.append(result) }
        }
        return results
    }
}
