import AirportsExample
import ArgumentParser
import Depot
import DepotHTTP
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store's airports over HTTP on 127.0.0.1 until interrupted (Ctrl-C or SIGTERM).",
        discussion: """
            GET /airports?country=&q=&near=LAT,LON&min_elevation=&after=&limit=   airports as JSON
            GET /airports/{icao}                                                  one airport, or 404
            PATCH /airports/{icao}    a partial JSON body: absent members unchanged, null clears one
            GET /sync/airports/feed?cursor=C&limit=N   the change feed `airports sync` pulls (a full
                                      copy, then the changes since: DepotSyncServer's protocol)
            POST /sync/airports/push  one pushed edit, with an Idempotency-Key header; 409 with the
                                      server's airport when a changed member no longer holds its base
            /sync/country/{code}/airports/feed and …/push   the same for one country's airports
            GET /dataset              the sync log's epoch and newest change, the airport count
            GET /health               200 when the store answers, else 503

            Writes (PATCH and pushes) need Authorization: Bearer <write token>; without
            --write-token the server is read-only (403 to every write).

            SIGTERM or SIGINT stops accepting connections, finishes the requests in flight, closes
            the store and exits 0.

            ENVIRONMENT (a flag wins over its variable)
              AIRPORTS_STORE, AIRPORTS_POSTGRES_URL   the store, as --store and --postgres
              AIRPORTS_PORT                           as --port
              AIRPORTS_MAX_CONNECTIONS                as --max-connections
              AIRPORTS_IDLE_TIMEOUT                   as --idle-timeout
              AIRPORTS_WRITE_TOKEN                    as --write-token
            """)

    @OptionGroup var source: StoreOptions

    @Option(
        parsing: .unconditional,
        help: "The port on 127.0.0.1 (0: any free port; default: $AIRPORTS_PORT, else 8080).")
    var port: Int?

    @Option(
        name: .customLong("max-connections"), parsing: .unconditional,
        help: "Connections served at once; more wait (default: $AIRPORTS_MAX_CONNECTIONS, else 256).")
    var maximumConnections: Int?

    @Option(
        name: .customLong("idle-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds an idle connection stays open (default: $AIRPORTS_IDLE_TIMEOUT, else 30).", valueName: "seconds"))
    var idleTimeout: Int?

    @Option(
        name: .customLong("write-token"),
        help: ArgumentHelp(
            "The token writes must send as Authorization: Bearer (default: $AIRPORTS_WRITE_TOKEN; none: read-only).",
            valueName: "token"))
    var writeToken: String?

    /// Who may write: holders of the write token, or nobody.
    var access: AirportsServer.Access {
        guard let token = writeToken ?? environment("AIRPORTS_WRITE_TOKEN"), !token.isEmpty else { return .readOnly }
        return AirportsServer.Access(writeTokens: [token])
    }

    /// `flag`'s value, else the environment variable's (which must be a whole number), else `fallback`.
    private func setting(_ flag: Int?, _ variable: String, _ fallback: Int) throws -> Int {
        if let flag { return flag }
        guard let text = environment(variable) else { return fallback }
        guard let value = Int(text) else {
            throw ValidationError("\(variable) must be a whole number, e.g. \(fallback) (got '\(text)')")
        }
        return value
    }

    /// The port and limits in force.
    func settings() throws -> (port: Int, limits: AirportsServer.Limits) {
        let port = try setting(port, "AIRPORTS_PORT", 8080)
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be 0…65535, e.g. --port 8080 (got \(port))")
        }
        var limits = AirportsServer.Limits()
        limits.maximumConnections = try setting(
            maximumConnections, "AIRPORTS_MAX_CONNECTIONS", limits.maximumConnections)
        limits.idleTimeout = .seconds(try setting(idleTimeout, "AIRPORTS_IDLE_TIMEOUT", 30))
        guard limits.maximumConnections > 0 else {
            throw ValidationError("--max-connections must be at least 1 (got \(limits.maximumConnections))")
        }
        guard limits.idleTimeout > .zero else {
            throw ValidationError("--idle-timeout must be at least 1 second (got \(limits.idleTimeout))")
        }
        return (port, limits)
    }

    func validate() throws {
        _ = try settings()
    }

    func run() async throws {
        let name = source.name
        let (port, limits) = try settings()
        try await source.withStore(existing: true) { store in
            let count = try await store.repository(Airport.self).count()
            let access = access
            let app = try await AirportsServer.application(
                store: store, port: port, limits: limits, access: access
            ) { bound in
                let writes = access.writeTokens.isEmpty ? "read-only" : "writes need the token"
                write("serving \(count) airports from \(name) on http://127.0.0.1:\(bound) (\(writes); Ctrl-C stops)")
            }
            // swift-service-lifecycle: SIGTERM and SIGINT end it gracefully.
            try await app.runService()
        }
        write("stopped: the requests in flight were answered and the store is closed")
    }
}
