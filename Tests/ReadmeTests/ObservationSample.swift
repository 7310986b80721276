// The README's observation sample, verbatim between the markers (ReadmeSampleTests checks it).
// Compiled, not run: its loops end only when the task is cancelled.
import Depot

private func show(_ list: [Airport]) { print(list.map(\.icao)) }
private func apply(_ change: ResultChange<Airport>) { print(change.inserted, change.removed) }

func observeNorway(airports: Repository<Airport>) async throws {
    // readme:begin
    // The current result, then a new one after every commit that changed it.
    for try await list in airports.observe(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
        show(list)
    }

    // The same, with a row-level diff against the previous element, keyed by primary key.
    for try await change in airports.changes(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
        // change.removed / change.moved.from: old indices; change.inserted / change.moved.to /
        // change.updated: new indices. change.applied(to: previous) == change.result.
        apply(change)
    }

    // A burst of writes becomes one element after 100 ms of quiet (or .throttle: one per interval).
    for try await list in airports.observe(timing: .debounce(.milliseconds(100))) { show(list) }
    // readme:end
}
