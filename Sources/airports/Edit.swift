import AirportsExample
import ArgumentParser
import Depot
import DepotSync

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit an airport in a client store, offline: stored at once, pushed by the next `airports sync`.",
        discussion: """
            EXAMPLES
              airports edit --store client.sqlite ENGM --name "Oslo Gardermoen"
              airports edit --store client.sqlite ENGM --iata null          (null clears an optional member)
              airports edit --store client.sqlite ENZV --city Sola --elevation 29

            The edit shows in `airports query` at once, marked pending until a sync pushes it.
            """)

    @OptionGroup var target: StoreOptions

    @Argument(help: "The airport's ICAO code, e.g. ENGM.")
    var icao: String

    @Option(help: "A new name.")
    var name: String?

    @Option(help: "A new IATA code, or null to clear it.")
    var iata: String?

    @Option(help: "A new city, or null to clear it.")
    var city: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("A new elevation in feet.", valueName: "feet"))
    var elevation: Double?

    func validate() throws {
        if name == nil, iata == nil, city == nil, elevation == nil {
            throw ValidationError("give at least one of --name, --iata, --city, --elevation")
        }
        if let name, name.trimmingCharacters(in: .whitespaces).isEmpty || name == "null" {
            throw ValidationError("--name cannot be empty or null (an airport always has a name)")
        }
        if let elevation, !elevation.isFinite { throw ValidationError("--elevation must be a number of feet") }
    }

    func run() async throws {
        var assignments: [Assignment<Airport>] = []
        if let name { assignments.append(.set(\.name, to: name)) }
        if let iata { assignments.append(.set(\.iata, to: iata == "null" ? nil : iata)) }
        if let city { assignments.append(.set(\.city, to: city == "null" ? nil : city)) }
        if let elevation { assignments.append(.set(\.elevation, to: elevation)) }
        let key = icao
        let pending = try await target.withStore(existing: true) { store in
            let engine = SyncEngine.airports(store: store, client: nil)
            let updated = try await engine.store.repository(Airport.self).update(
                where: \.icao == key, set: assignments)
            guard updated == 1 else {
                throw DepotError(.invalidQuery, "no airport with icao '\(key)' in \(target.name)", table: "airports")
            }
            return try await engine.status().pendingChanges
        }
        write("edited \(icao) in \(target.name); \(pending) edit(s) waiting for `airports sync`")
    }
}
