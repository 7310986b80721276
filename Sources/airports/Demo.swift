import AirportsExample
import ArgumentParser
import DepotHTTP

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import the bundled CSV into a server store, serve it over HTTP, sync a client store, "
            + "send a partial update across and query (all in a temporary folder).")

    func run() async throws {
        try await AirportsDemo.run(say: write)
    }
}
