import AirportsExample
import Foundation
import Synchronization
import Testing

/// A clock moved by hand and an output kept in memory.
private final class Screen: Sendable {
    private let start = ContinuousClock.now
    private let elapsed = Mutex(Duration.zero)
    private let written = Mutex("")

    func display(_ style: ProgressDisplay.Style) -> ProgressDisplay {
        ProgressDisplay(
            style: style, output: { text in self.written.withLock { $0 += text } },
            now: { self.start + self.elapsed.withLock { $0 } })
    }

    /// Moves the clock to `seconds` after the start.
    func at(_ seconds: Double) { elapsed.withLock { $0 = .milliseconds(Int(seconds * 1000)) } }

    /// What was written since the last call.
    func take() -> String {
        written.withLock { text in
            defer { text = "" }
            return text
        }
    }
}

@Suite("Progress display")
struct ProgressDisplayTests {
    @Test("on a terminal: a bar redrawn in place at most every 100 ms, with rate and ETA, then the phase's total")
    func bar() {
        let screen = Screen()
        let display = screen.display(.bar)
        display.update(WorkProgress(phase: "parsing", done: 0, total: 28_298, unit: "rows"))
        #expect(
            screen.take() == "\rparsing [" + String(repeating: "·", count: 24)
                + "] 0/28,298 rows (0%)  0 rows/s\u{1B}[K")
        screen.at(0.05)
        display.update(WorkProgress(phase: "parsing", done: 700, total: 28_298, unit: "rows"))
        #expect(screen.take() == "", "a redraw within 100 ms of the last one is skipped")
        screen.at(1)
        display.update(WorkProgress(phase: "parsing", done: 14_149, total: 28_298, unit: "rows"))
        #expect(
            screen.take() == "\rparsing [" + String(repeating: "█", count: 12) + String(repeating: "·", count: 12)
                + "] 14,149/28,298 rows (50%)  14,149 rows/s  ETA 1.0 s\u{1B}[K")
        screen.at(2)
        display.update(WorkProgress(phase: "parsing", done: 28_298, total: 28_298, unit: "rows"))
        #expect(screen.take() == "\rparsing: 28,298 rows in 2.00 s (14,149 rows/s)\u{1B}[K\n")
        display.update(WorkProgress(phase: "parsing", done: 28_298, total: 28_298, unit: "rows"))
        display.finish()
        #expect(screen.take() == "", "a complete phase is not closed twice")
    }

    @Test("a phase that ends before a hundredth of a second has passed states no rate")
    func instantPhase() {
        let screen = Screen()
        let display = screen.display(.lines)
        display.update(WorkProgress(phase: "4 search index", done: 0, total: 28_298, unit: "airports"))
        _ = screen.take()
        display.update(WorkProgress(phase: "4 search index", done: 28_298, total: 28_298, unit: "airports"))
        #expect(screen.take() == "4 search index: 28,298 airports in 0.00 s\n")
    }

    @Test("not on a terminal: a plain line every 2 s and one at each phase's end, without escapes")
    func lines() {
        let screen = Screen()
        let display = screen.display(.lines)
        // (seconds, phase, done, total, unit, what is written)
        let steps: [(Double, String, Int, Int?, String, String)] = [
            (0, "fetching", 5_000, nil, "airports", ""),
            (1, "fetching", 10_000, nil, "airports", ""),
            (2.5, "fetching", 25_000, nil, "airports", "fetching 25,000 airports  10,000 airports/s\n"),
            // A new phase closes the one whose total was never known.
            (3, "storing", 0, 25_000, "airports", "fetching: 25,000 airports in 3.00 s (8,333 airports/s)\n"),
            (
                5.5, "storing", 10_000, 25_000, "airports",
                "storing 10,000/25,000 airports (40%)  4,000 airports/s  ETA 3.8 s\n"
            ),
            (8, "storing", 25_000, 25_000, "airports", "storing: 25,000 airports in 5.00 s (5,000 airports/s)\n"),
        ]
        for (seconds, phase, done, total, unit, written) in steps {
            screen.at(seconds)
            display.update(WorkProgress(phase: phase, done: done, total: total, unit: unit))
            #expect(screen.take() == written, "at \(seconds) s")
        }
    }

    @Test("finish() closes a phase whose total was never known; a silent display writes nothing")
    func finishAndSilence() {
        let screen = Screen()
        let display = screen.display(.lines)
        display.update(WorkProgress(phase: "fetching", done: 12, total: nil, unit: "changes"))
        screen.at(0.5)
        display.finish()
        #expect(screen.take() == "fetching: 12 changes in 0.50 s (24 changes/s)\n")
        let silent = screen.display(.silent)
        silent.update(WorkProgress(phase: "parsing", done: 1, total: 2, unit: "rows"))
        silent.update(WorkProgress(phase: "parsing", done: 2, total: 2, unit: "rows"))
        silent.finish()
        #expect(screen.take() == "")
    }

    @Test(
        "numbers are grouped by thousands whatever the locale",
        arguments: [
            (0, "0"), (999, "999"), (1_000, "1,000"), (28_298, "28,298"), (1_234_567, "1,234,567"), (-4_200, "-4,200"),
        ])
    func grouping(number: Int, text: String) {
        #expect(ProgressDisplay.grouped(number) == text)
    }
}
