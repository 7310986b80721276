import AirportsExample
import ArgumentParser
import Depot
import Foundation

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a store to the example's latest schema version (or --to N), step by step, "
            + "showing each step that works through rows.")

    @OptionGroup var target: StoreOptions

    @Option(help: "The version to reach (default: the latest, \(AirportsMigrations.all.latestVersion)).")
    var to: Int?

    @Flag(help: "Print nothing but errors: no progress, no summary.")
    var quiet = false

    @Flag(
        help: ArgumentHelp(
            "Change nothing: print the steps that would bring the store's tables to the example's entities, "
                + "as Swift source of the next Migration to review and paste."))
    var propose = false

    func validate() throws {
        if propose, to != nil { throw ValidationError("give --propose or --to, not both") }
        let latest = AirportsMigrations.all.latestVersion
        if let to, !(0...latest).contains(to) {
            throw ValidationError("--to takes a version from 0 to \(latest), e.g. --to \(latest) (got \(to))")
        }
    }

    func run() async throws {
        if propose {
            let source = try await target.withStore(existing: true) { store in
                guard let store = store as? any MigratableStore else {
                    throw DepotError(.migration, "\(target.name) cannot be migrated")
                }
                return try await AirportsMigrations.proposal(for: store)
            }
            write(source)
            return
        }
        let display = ProgressDisplay(quiet: quiet)
        let started = ContinuousClock.now
        let outcome = try await target.withStore(existing: true) { store in
            guard let store = store as? any MigratableStore else {
                throw DepotError(.migration, "\(target.name) cannot be migrated")
            }
            return try await AirportsMigrations.run(on: store, to: to, progress: display.update)
        }
        display.finish()
        guard !quiet else { return }
        guard outcome.from != outcome.to else {
            write("\(target.name) is at version \(outcome.to): nothing to do")
            return
        }
        let seconds = (ContinuousClock.now - started).seconds
        write(
            "migrated \(target.name) from version \(outcome.from) to \(outcome.to) ("
                + outcome.steps.joined(separator: ", ") + ") in " + String(format: "%.2f s", seconds))
    }
}
