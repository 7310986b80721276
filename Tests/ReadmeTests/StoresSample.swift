// The README's "Stores" samples, verbatim between the markers (ReadmeSampleTests checks it).
// They run in a process of their own (ProcessSampleTests: a file in the current folder, Application
// Support, the server named by DATABASE_URL).
import Depot
import DepotPostgres
import DepotSQLite
import Foundation

func quickStartOnSQLite() async throws {
    // readme:begin
    let store = try SQLiteStore(path: "airports.sqlite")  // created if missing
    try await quickStart(store: store)
    // readme:end
}

func quickStartOnPostgres() async throws {
    // readme:begin
    // The server's address from the environment, as servers are usually deployed.
    let url =
        ProcessInfo.processInfo.environment["DATABASE_URL"] ?? "postgres://app:secret@127.0.0.1:5432/app?schema=depot"
    let store = try PostgresStore(url: url)
    try await quickStart(store: store)  // the function above, unchanged
    // readme:end
}
