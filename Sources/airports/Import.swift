import AirportsExample
import ArgumentParser
import Depot
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an airports CSV into a store, replacing its airports (all rows or none).")

    @Option(help: "The CSV to import (default: the bundled airports.csv).")
    var csv: String?

    @OptionGroup var target: StoreOptions

    @Flag(help: "Print nothing but errors: no progress, no summary.")
    var quiet = false

    func run() async throws {
        let url: URL
        if let csv {
            url = URL(fileURLWithPath: csv)
        } else if let bundled = AirportsCSV.bundledURL {
            url = bundled
        } else {
            throw DepotError(.storage, "the bundled airports.csv is missing; pass --csv PATH")
        }
        let display = ProgressDisplay(quiet: quiet)
        let summary = try await target.withStore(existing: false) { store in
            let summary = try await AirportImporter.run(csv: url, into: store, progress: display.update)
            // The store is left at the example's latest version, ready for every query (the
            // search index is built over the imported rows at once, faster than row by row).
            if let store = store as? any MigratableStore {
                _ = try await AirportsMigrations.run(on: store, progress: display.update)
            }
            return summary
        }
        display.finish()
        guard !quiet else { return }
        write(
            "imported \(summary.rows) airports into \(target.name) in "
                + String(format: "%.2f", summary.parseSeconds + summary.storeSeconds) + " s")
    }
}
