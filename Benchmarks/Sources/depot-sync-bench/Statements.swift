import BenchHarness
import DepotSQLite
import Foundation
import Logging
import Synchronization

// `--statements`: the statements each subject runs, for finding where its time goes. One run of
// each case's subject on a store logging every statement at `.trace` into a tally: per SQL text
// (its first 110 characters), how often it ran and its total time inside the store.

/// Statements by SQL text: how many, and their total duration in milliseconds.
final class StatementTally: Sendable {
    let counts = Mutex<[String: (count: Int, milliseconds: Double)]>([:])

    /// A store on `path` that reports every statement here.
    func store(path: String) throws -> SQLiteStore {
        var logger = Logger(label: "depot-sync-bench.statements") { _ in TallyHandler(tally: self) }
        logger.logLevel = .trace
        return try SQLiteStore(path: path, logging: SQLLogging(logger: logger, slowStatementThreshold: nil))
    }

    func record(_ sql: String, milliseconds: Double) {
        let key = String(sql.prefix(110))
        counts.withLock { counts in
            let old = counts[key] ?? (0, 0)
            counts[key] = (old.count + 1, old.milliseconds + milliseconds)
        }
    }

    /// Prints the tally, most time first, and forgets it.
    func report(_ title: String, elapsed: Double) {
        let rows = counts.withLock { counts in
            defer { counts = [:] }
            return counts.sorted { $0.value.milliseconds > $1.value.milliseconds }
        }
        let statements = rows.reduce(0) { $0 + $1.value.count }
        let inStore = rows.reduce(0) { $0 + $1.value.milliseconds }
        print(
            "\n\(title): \(String(format: "%.1f", elapsed)) ms, \(statements) statements, "
                + String(format: "%.1f ms in them", inStore))
        print("  count   total ms  statement")
        for (sql, tally) in rows.prefix(20) {
            print(
                String(format: "%7d %10.2f  ", tally.count, tally.milliseconds)
                    + sql.replacingOccurrences(of: "\n", with: " "))
        }
    }
}

/// Hands each `.trace` statement log to a tally.
struct TallyHandler: LogHandler {
    let tally: StatementTally
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level == .trace, case .string(let text) = event.metadata?["duration_ms"],
            let duration = Double(text)
        else { return }
        tally.record(event.message.description, milliseconds: duration)
    }
}
