import Depot
import Logging

/// What a SQL store tells its swift-log `Logger`, and how much.
///
/// | Level | What the store logs |
/// | --- | --- |
/// | `.trace` | every statement: its SQL (the message), `duration_ms`, `rows` read or changed, and its bound values as `[2 values redacted]` unless ``showsBoundValues`` |
/// | `.debug` | each transaction's commit (`duration_ms`, `tables` written) and rollback (`error`: why) |
/// | `.info` | each migration step applied or reverted, and where a migration ended |
/// | `.notice` | a PostgreSQL listener that starts again after its connection was lost |
/// | `.warning` | a statement slower than ``slowStatementThreshold`` |
///
/// Transactions log at `.debug`, not `.info`: swift-log's default level is `.info`, and an app
/// writing a few transactions a second would fill its log; a rollback's error reaches the caller
/// anyway. The logger's own level decides what is emitted; below `.trace` a statement costs two
/// clock reads.
///
/// ```swift
/// var logger = Logger(label: "app.database")
/// logger.logLevel = .trace
/// let store = try SQLiteStore(
///     path: "app.sqlite",
///     logging: SQLLogging(logger: logger, slowStatementThreshold: .milliseconds(250)))
/// // … trace app.database: arguments=[1 value redacted] duration_ms=0.08 rows=84 [DepotSQL]
/// //     SELECT "icao", … FROM "airports" WHERE "country" = ? ORDER BY "icao"
/// ```
public struct SQLLogging: Sendable {
    /// Where the store logs.
    public var logger: Logger
    /// A statement that takes longer is logged at `.warning`, whatever the logger's level lets
    /// through below it; `nil` never warns.
    public var slowStatementThreshold: Duration?
    /// Whether bound values appear in statement logs. Off by default: they may be personal data
    /// or secrets.
    public var showsBoundValues: Bool

    /// Logging through `logger`, warning about statements slower than `slowStatementThreshold`.
    ///
    /// - Parameters:
    ///   - logger: Where the store logs; its level decides what is emitted.
    ///   - slowStatementThreshold: Statements slower than this log at `.warning` (default 1 s;
    ///     `nil`: never).
    ///   - showsBoundValues: Whether statement logs show bound values (default: redacted).
    public init(logger: Logger, slowStatementThreshold: Duration? = .seconds(1), showsBoundValues: Bool = false) {
        self.logger = logger
        self.slowStatementThreshold = slowStatementThreshold
        self.showsBoundValues = showsBoundValues
    }

    /// The default for a store: a logger labelled `label` (`depot.sqlite`, `depot.postgres`),
    /// slow statements from 1 s, values redacted.
    public static func standard(label: String) -> SQLLogging { SQLLogging(logger: Logger(label: label)) }

    /// Logs a statement that failed, at `.debug` with the error.
    package func failed(
        _ sql: @autoclosure () -> String, arguments: [StoredValue], elapsed: Duration, error: any Error
    ) {
        guard logger.logLevel <= .debug else { return }
        var metadata = self.metadata(arguments: arguments, elapsed: elapsed, rows: nil)
        metadata["error"] = "\(error)"
        logger.debug("\(sql())", metadata: metadata)
    }

    /// Whether statements are logged one by one (the logger takes `.trace`).
    package var tracesStatements: Bool { logger.logLevel <= .trace }

    /// Logs a finished statement: `.warning` when slower than the threshold, else `.trace`.
    package func record(_ sql: @autoclosure () -> String, arguments: [StoredValue], elapsed: Duration, rows: Int?) {
        if let slowStatementThreshold, elapsed > slowStatementThreshold {
            logger.warning(
                "slow statement (over \(slowStatementThreshold)): \(sql())",
                metadata: metadata(arguments: arguments, elapsed: elapsed, rows: rows))
        } else if tracesStatements {
            logger.trace("\(sql())", metadata: metadata(arguments: arguments, elapsed: elapsed, rows: rows))
        }
    }

    private func metadata(arguments: [StoredValue], elapsed: Duration, rows: Int?) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["duration_ms": "\(Self.milliseconds(elapsed))"]
        if let rows { metadata["rows"] = "\(rows)" }
        if !arguments.isEmpty {
            metadata["arguments"] =
                showsBoundValues
                ? .array(arguments.map { .string(Self.describe($0)) })
                : "[\(arguments.count) value\(arguments.count == 1 ? "" : "s") redacted]"
        }
        return metadata
    }

    /// `elapsed` in milliseconds, to the microsecond.
    package static func milliseconds(_ elapsed: Duration) -> Double {
        let (seconds, attoseconds) = elapsed.components
        return (Double(seconds) * 1e6 + Double(attoseconds / 1_000_000_000_000)) / 1e3
    }

    /// A bound value as a log shows it: text quoted, bytes by their count.
    static func describe(_ value: StoredValue) -> String {
        switch value {
        case .null: "NULL"
        case .text(let text): "'\(text)'"
        case .blob(let bytes): "<\(bytes.count) bytes>"
        default: "\(value)"
        }
    }
}
