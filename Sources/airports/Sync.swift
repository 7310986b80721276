import AirportsExample
import ArgumentParser
import Depot
import DepotHTTP
import DepotSync
import Foundation

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync a client store with an airports API: push the edits made offline (`airports edit`), then "
            + "pull what changed (everything the first time).",
        discussion: """
            Conflicts (the same member edited here and on the server since this store last synced) are
            resolved field by field, the later edit winning; the result is pushed, so every replica ends
            with it. Edits the server refuses are kept and listed; nothing is retried forever.

            With --country, only that country's airports are synced (the server's /sync/country/{code}
            routes): they alone are pulled, and a push may touch no other.
            """)

    @Option(help: "The API's base URL, e.g. http://127.0.0.1:8080")
    var from: String

    @OptionGroup var target: StoreOptions

    @Option(help: "Only this country's airports (two-letter code): pulled, and the only ones pushes may touch.")
    var country: String?

    @Flag(help: "Print nothing but errors: no progress, no summary.")
    var quiet = false

    @Option(
        help: ArgumentHelp(
            "The server's write token, sent with pushes as Authorization: Bearer (default: $AIRPORTS_TOKEN).",
            valueName: "token"))
    var token: String?

    @Option(
        name: .customLong("page-size"), parsing: .unconditional,
        help: ArgumentHelp("Airports per feed page, 1…10000 (default 5000).", valueName: "count"))
    var pageSize = 5_000

    func validate() throws {
        guard let url = URL(string: from), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--from takes an http(s) URL, e.g. http://127.0.0.1:8080 (got '\(from)')")
        }
        guard (1...10_000).contains(pageSize) else {
            throw ValidationError("--page-size must be 1…10000, e.g. --page-size 1000 (got \(pageSize))")
        }
    }

    func run() async throws {
        guard let base = URL(string: from) else { throw ValidationError("--from: '\(from)' is not a URL") }
        var configuration = APIClient.Configuration()
        if let token = token ?? environment("AIRPORTS_TOKEN"), !token.isEmpty {
            configuration.headers["Authorization"] = "Bearer \(token)"
        }
        let client = APIClient(baseURL: base, configuration: configuration)
        let clock = ContinuousClock()
        let started = clock.now
        let (report, status, rejected) = try await target.withStore(existing: false) { store in
            let engine = SyncEngine.airports(store: store, client: client, pageSize: pageSize, country: country)
            let report = try await engine.sync()
            return (report, try await engine.status(), try await engine.rejectedChanges())
        }
        guard !quiet else { return }
        var line = "synced with \(from): pushed \(report.pushed) edit\(report.pushed == 1 ? "" : "s")"
        if report.conflicts > 0 {
            line += " (\(report.conflicts) conflict\(report.conflicts == 1 ? "" : "s") resolved)"
        }
        line += ", pulled \(report.pulledRows) airport\(report.pulledRows == 1 ? "" : "s")"
        if report.pulledDeletions > 0 { line += " and \(report.pulledDeletions) deletion(s)" }
        if report.fullCopies > 0 { line += " (a full copy: the store was too far behind)" }
        line += " in \(report.requests) request\(report.requests == 1 ? "" : "s"), "
        line += String(format: "%.2f s", (clock.now - started).seconds) + "; store \(target.name)"
        write(line)
        for change in rejected {
            let icao = change.key.first.map { "\($0.excerpt)" } ?? "?"
            write("refused: edit \(change.sequence) of \(icao): \(change.rejection.map { "\($0)" } ?? "")")
        }
        if status.pendingChanges > 0 { write("\(status.pendingChanges) edit(s) still waiting to be pushed") }
    }
}
