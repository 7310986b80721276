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

/// An app's store at launch (run by ProcessSampleTests in a process of its own: it writes to
/// Application Support).
func appLaunch() async throws -> SQLiteStore {
    // readme:begin
    // At launch: the file in Application Support (the folder is created if missing; the store
    // creates the file, not its folder), then the tables brought to the entities' shape.
    let folder = try FileManager.default.url(
        for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
    let store = try SQLiteStore(path: folder.appendingPathComponent("airports.sqlite").path)
    let migrations = Migrations([Migration("1 airports", [.createTable(Airport.self)])])
    try await store.open(migrations, entities: [Airport.self])  // before the first read or write
    // readme:end
    return store
}
