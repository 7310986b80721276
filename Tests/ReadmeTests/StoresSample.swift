// The README's "Stores" samples, verbatim between the markers (ReadmeSampleTests checks it).
// Compiled, not run here: they open a file in the current folder and a server by address.
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
    let store = try PostgresStore(url: "postgres://app:secret@127.0.0.1:5432/app?schema=depot")
    try await quickStart(store: store)  // the function above, unchanged
    // readme:end
}

/// An app's store at launch (compiled, not run: it writes to Application Support).
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
