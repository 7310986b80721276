import Foundation
import Synchronization

/// Draws ``WorkProgress`` for a person, as `airports import` and `airports sync` do on standard
/// error: on a terminal a bar redrawn in place with count, rate and ETA; otherwise (a pipe, a
/// file, CI) a plain line every few seconds and one when a phase ends; nothing at all when quiet.
///
/// ```swift
/// let display = ProgressDisplay(quiet: false)          // a bar if standard error is a terminal
/// try await AirportImporter.run(csv: url, into: store, progress: display.update)
/// display.finish()
/// ```
public final class ProgressDisplay: Sendable {
    /// How progress is drawn.
    public enum Style: Sendable {
        /// A bar redrawn in place (`\r`), for a terminal.
        case bar
        /// Plain lines, every ``ProgressDisplay/lineInterval`` and at each phase's end.
        case lines
        /// Nothing.
        case silent
    }

    /// How this display draws.
    public let style: Style
    private let output: @Sendable (String) -> Void
    private let now: @Sendable () -> ContinuousClock.Instant
    /// Shortest time between two redraws of the bar.
    public static let redrawInterval = Duration.milliseconds(100)
    /// Time between two plain lines of one phase.
    public static let lineInterval = Duration.seconds(2)
    /// Characters in the bar.
    public static let barWidth = 24

    private struct State {
        var current: WorkProgress?
        var started: ContinuousClock.Instant
        var drawn: ContinuousClock.Instant?
    }
    private let state: Mutex<State>

    /// A display on standard error: a bar when it is a terminal, lines otherwise, nothing when `quiet`.
    public convenience init(quiet: Bool) {
        self.init(
            style: quiet ? .silent : isatty(STDERR_FILENO) == 1 ? .bar : .lines,
            output: { FileHandle.standardError.write(Data($0.utf8)) }, now: { ContinuousClock.now })
    }

    /// A display that draws in `style` through `output`, reading the time from `now` (tests give
    /// a clock they move by hand).
    public init(
        style: Style, output: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.style = style
        self.output = output
        self.now = now
        state = Mutex(State(started: now()))
    }

    /// Shows `progress`: a new phase ends the previous one's line first.
    public func update(_ progress: WorkProgress) {
        guard style != .silent else { return }
        let now = now()
        let text = state.withLock { state -> String? in
            // A phase reported complete again (the parser reports its last line twice when it
            // falls on a chunk boundary) was closed already.
            if let current = state.current, current.phase == progress.phase, current.isComplete { return nil }
            var text = ""
            if let current = state.current, current.phase != progress.phase {
                if !current.isComplete { text += final(current, since: state.started, now: now) }
                state.started = now
                state.drawn = nil
            }
            state.current = progress
            let elapsed = now - state.started
            if progress.isComplete { return text + final(progress, since: state.started, now: now) }
            // The bar draws at once and then at most every redrawInterval; plain lines wait a
            // lineInterval from the phase's start, then from the last line.
            let due =
                style == .bar
                ? state.drawn.map { now - $0 >= Self.redrawInterval } ?? true
                : now - (state.drawn ?? state.started) >= Self.lineInterval
            guard due else { return text.isEmpty ? nil : text }
            state.drawn = now
            let line = Self.describe(progress, elapsed: elapsed, bar: style == .bar)
            return text + (style == .bar ? "\r" + line + "\u{1B}[K" : line + "\n")
        }
        if let text { output(text) }
    }

    /// Ends the last phase's line (a download whose total was never known ends here).
    public func finish() {
        guard style != .silent else { return }
        let now = now()
        let text = state.withLock { state -> String? in
            defer { state.current = nil }
            guard let current = state.current, !current.isComplete else { return nil }
            return final(current, since: state.started, now: now)
        }
        if let text { output(text) }
    }

    /// The line that closes a phase, `parsing: 28,298 rows in 0.41 s (69,020 rows/s)`; on a
    /// terminal it replaces the bar. A phase shorter than the hundredths shown has no rate.
    private func final(_ progress: WorkProgress, since started: ContinuousClock.Instant, now: ContinuousClock.Instant)
        -> String
    {
        let seconds = (now - started).seconds
        var line =
            "\(progress.phase): \(Self.grouped(progress.done)) \(progress.unit) in " + String(format: "%.2f s", seconds)
        if seconds >= 0.005 {
            line += " (\(Self.grouped(Int(Double(progress.done) / seconds))) \(progress.unit)/s)"
        }
        return style == .bar ? "\r" + line + "\u{1B}[K\n" : line + "\n"
    }

    /// `parsing [████······] 9,000/28,298 rows  45,210 rows/s  ETA 0.4 s`, or without the bar and
    /// as a sentence for plain lines.
    public static func describe(_ progress: WorkProgress, elapsed: Duration, bar: Bool) -> String {
        let seconds = elapsed.seconds
        let rate = seconds > 0 ? Double(progress.done) / seconds : 0
        var text = "\(progress.phase) "
        guard let total = progress.total, total > 0 else {
            return text + "\(grouped(progress.done)) \(progress.unit)  \(grouped(Int(rate))) \(progress.unit)/s"
        }
        if bar {
            let filled = min(barWidth, progress.done * barWidth / total)
            text +=
                "[" + String(repeating: "█", count: filled) + String(repeating: "·", count: barWidth - filled) + "] "
        }
        text += "\(grouped(progress.done))/\(grouped(total)) \(progress.unit) (\(progress.done * 100 / total)%)"
        text += "  \(grouped(Int(rate))) \(progress.unit)/s"
        if rate > 0 { text += "  ETA " + String(format: "%.1f s", Double(total - progress.done) / rate) }
        return text
    }

    /// `28298` as `28,298`, whatever the locale (output people and tests read alike).
    public static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (number < 0 ? "-" : "") + result
    }
}
