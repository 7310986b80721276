import BenchHarness
import FluentKit
import FluentSQLiteDriver
import Foundation
import Logging
import NIOCore
import NIOPosix

// What a Fluent user writes: a Model, saved one by one or in batches, fetched with a query,
// on Fluent's SQLite driver (its own SQLite build, through SQLiteNIO). Same file, same table,
// against the same raw C baseline, in the same run.

final class FluentAirport: Model, @unchecked Sendable {
    static let schema = "airports"

    @ID(custom: "icao", generatedBy: .user) var id: String?
    @OptionalField(key: "iata") var iata: String?
    @Field(key: "name") var name: String
    @OptionalField(key: "city") var city: String?
    @Field(key: "country") var country: String
    @Field(key: "elevation") var elevation: Double
    @Field(key: "lat") var lat: Double
    @Field(key: "lon") var lon: Double

    init() {}

    init(_ airport: BenchAirport) {
        id = airport.icao
        iata = airport.iata
        name = airport.name
        city = airport.city
        country = airport.country
        elevation = airport.elevation
        lat = airport.latitude
        lon = airport.longitude
    }
}

enum FluentCases {
    /// Fluent's databases on `path`, used by `body`, then shut down.
    static func withDatabase(_ path: String, _ body: (any Database) async throws -> Void) async throws {
        let threadPool = NIOThreadPool(numberOfThreads: 1)
        threadPool.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let databases = Databases(threadPool: threadPool, on: group)
        databases.use(.sqlite(.file(path)), as: .sqlite)
        var logger = Logger(label: "fluent-bench")
        logger.logLevel = .warning
        do {
            guard let database = databases.database(logger: logger, on: group.any()) else {
                throw BenchError(description: "fluent: no database")
            }
            try await body(database)
        } catch {
            await databases.shutdownAsync()
            try await threadPool.shutdownGracefully()
            try await group.shutdownGracefully()
            throw error
        }
        await databases.shutdownAsync()
        try await threadPool.shutdownGracefully()
        try await group.shutdownGracefully()
    }

    @MainActor
    static func run(n: Int, rows: [BenchAirport]) async throws -> [BenchResult] {
        // Models are made inside the timed work (a saved model cannot be created again).
        let models: @Sendable () -> [FluentAirport] = { rows.map(FluentAirport.init) }
        // A batch is one multi-row INSERT: 1,000 rows keep it under SQLite's parameter limit.
        let batched: @Sendable (String) async throws -> Void = { path in
            let all = models()
            try await withDatabase(path) { database in
                try await database.transaction { tx in
                    for start in stride(from: 0, to: all.count, by: 1_000) {
                        try await Array(all[start..<min(start + 1_000, all.count)]).create(on: tx)
                    }
                }
            }
        }
        let oneByOne: @Sendable (String) async throws -> Void = { path in
            let all = models()
            try await withDatabase(path) { database in
                try await database.transaction { tx in
                    for model in all { try await model.create(on: tx) }
                }
            }
        }
        let fetch: @Sendable (String) async throws -> Void = { path in
            try await withDatabase(path) { database in
                _ = try await FluentAirport.query(on: database).sort(\.$id).all()
            }
        }
        var cases: [(String, @Sendable (String) async throws -> Void, Bool)] = [
            ("insert (fluent batches of 1,000)", batched, false), ("fetch all (fluent)", fetch, true),
        ]
        // One statement per model: minutes at 100,000 rows, so measured at 10,000 only.
        if n <= 10_000 { cases.append(("insert (fluent one by one)", oneByOne, false)) }
        var results: [BenchResult] = []
        for (name, work, seeded) in cases {
            // Both sides read and write the same table, made (and seeded) through the C API.
            let seed: @Sendable (String) -> Void = { path in
                let raw = RawDatabase(path: path)
                if seeded { raw.write(rows, upsert: false) }
            }
            let result = try await compare(
                name, n: n, subjectName: "fluent", subject: work, subjectPrepare: seed,
                baseline: { path in
                    if seeded {
                        _ = RawDatabase(path: path).fetch(RawDatabase.selectAll + " ORDER BY \"icao\"")
                    } else {
                        RawDatabase(path: path).write(rows, upsert: false)
                    }
                }, baselinePrepare: seed)
            if let result { results.append(result) }
        }
        return results
    }
}
