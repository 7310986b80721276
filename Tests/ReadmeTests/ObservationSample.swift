// The README's observation sample, verbatim between the markers (ReadmeSampleTests checks it).
// Run in a process of its own by ProcessSampleTests: its loops end only when the task is cancelled.
import Depot

func observeNorway(store: some Store) async throws {
    // readme:begin
    let airports = store.repository(Airport.self)  // the quick start's entity

    // The current result, then a new one after every commit that changed it.
    for try await list in airports.observe(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
        print(list.map(\.name))  // a view would show them
    }

    // The same, with a row-level diff against the previous element, keyed by primary key.
    var shown: [Airport] = []
    for try await change in airports.changes(where: \.country == "NO", orderBy: [.ascending(\.name)]) {
        // change.removed / change.moved.from: old indices; change.inserted / change.moved.to /
        // change.updated: new indices (a table view animates these).
        shown = change.applied(to: shown)  // == change.result
    }

    // A burst of writes becomes one element after 100 ms of quiet; however busy the table, the wait
    // for quiet lasts a second at most (or .throttle: one element per interval).
    for try await list in airports.observe(timing: .debounce(.milliseconds(100), maxWait: .seconds(1))) {
        print(list.count)
    }
    // readme:end
}
