// The README's "Stores" samples, verbatim between the markers (ReadmeSampleTests checks it).
// Compiled, not run here: they open a file in the current folder and a server by address.
import Depot
import DepotPostgres
import DepotSQLite

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
