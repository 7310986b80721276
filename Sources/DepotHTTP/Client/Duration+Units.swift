extension Duration {
    /// Whole nanoseconds, saturating at `Int64.max` (a "never" timeout of `.seconds(Int64.max)`
    /// must not trap).
    var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? .max : sum
    }

    /// Seconds as a `Double` (for comparing durations whose products could overflow `Duration`).
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }

    /// Whole milliseconds, for messages.
    var wholeMilliseconds: Int64 { saturatingNanoseconds / 1_000_000 }
}
