import Depot
import DepotSQL
import DepotTesting
import Logging
import Testing

/// What an SQL store logs (``SQLLogging``), checked the same way on SQLite and PostgreSQL: each
/// check opens its own store through `open`, with the logging it needs, and reads what a
/// capturing handler received.
public enum SQLLoggingChecks {
    /// Opens a fresh, empty store with `logging`, runs the body on it and cleans up.
    public typealias Open<Engine: SQLEngine> = (
        _ logging: SQLLogging, _ body: (SQLStore<Engine>) async throws -> Void
    ) async throws -> Void

    private struct Refused: Error, CustomStringConvertible {
        var description: String { "the body refused on purpose" }
    }

    /// The checks by the behaviour each pins down: a test's arguments.
    public static let behaviours = [
        "every statement at .trace with its SQL, duration and rows; bound values redacted",
        "bound values are shown when the store is told to show them",
        "a logger at .info receives no statement and no transaction",
        "a statement slower than the threshold is a .warning naming it",
        "a commit at .debug names its tables; a rollback its reason",
        "each migration step and the migration's end at .info",
    ]

    /// Runs the check for `behaviour` (one of ``behaviours``) on stores `open` gives.
    public static func check<Engine: SQLEngine>(_ behaviour: String, _ open: Open<Engine>) async throws {
        switch behaviours.firstIndex(of: behaviour) {
        case 0: try await statementsAtTrace(open)
        case 1: try await boundValuesWhenAsked(open)
        case 2: try await nothingBelowTheLoggersLevel(open)
        case 3: try await slowStatementsWarn(open)
        case 4: try await transactionsAtDebug(open)
        case 5: try await migrationsAtInfo(open)
        default: Issue.record("no logging check pins down '\(behaviour)'")
        }
    }

    /// Every statement at `.trace`: its SQL as the message, its duration, the rows it read or
    /// wrote, and its bound values redacted.
    static func statementsAtTrace<Engine: SQLEngine>(_ open: Open<Engine>) async throws {
        let (logger, lines) = CapturingLogHandler.logger(level: .trace)
        try await open(SQLLogging(logger: logger, slowStatementThreshold: nil)) { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            lines.clear()
            let secret = "s3cret-\(TestAirport.sample.count)"
            let norwegian = try await airports.fetch(where: \.country == "NO")
            _ = try await airports.fetch(where: \.name == secret)
            let selects = lines.lines.filter { $0.level == .trace && $0.message.hasPrefix("SELECT") }
            #expect(selects.count == 2, "\(lines.lines.map(\.fullText))")
            let first = try #require(selects.first)
            #expect(first.message.contains("airports"))
            #expect(first.metadata["rows"] == "\(norwegian.count)")
            #expect(first.metadata["arguments"] == "[1 value redacted]")
            #expect(Double("\(first.metadata["duration_ms"] ?? "")") != nil, "\(first.fullText)")
            #expect(!lines.lines.contains { $0.fullText.contains(secret) }, "a bound value reached the log")

            lines.clear()
            try await airports.upsert([TestAirport(icao: "ZZZZ", name: "New", country: "NO")])
            let write = lines.lines.first { $0.message.hasPrefix("INSERT") }
            #expect(write?.message.contains("-- 1 row(s)") == true, "\(lines.lines.map(\.fullText))")
            #expect(write?.metadata["rows"] == "1")
        }
    }

    /// With ``SQLLogging/showsBoundValues``, statement logs carry the values.
    static func boundValuesWhenAsked<Engine: SQLEngine>(_ open: Open<Engine>) async throws {
        let (logger, lines) = CapturingLogHandler.logger(level: .trace)
        try await open(SQLLogging(logger: logger, slowStatementThreshold: nil, showsBoundValues: true)) { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            _ = try await airports.fetch(where: \.name == "shown-value")
            let select = lines.lines.last { $0.message.hasPrefix("SELECT") }
            #expect(select?.metadata["arguments"] == .array(["'shown-value'"]), "\(select?.fullText ?? "none")")
        }
    }

    /// A logger at `.info` receives no statement and no transaction lines.
    static func nothingBelowTheLoggersLevel<Engine: SQLEngine>(_ open: Open<Engine>) async throws {
        let (logger, lines) = CapturingLogHandler.logger(level: .info)
        // No slow-statement warnings: a loaded machine may make any statement slow.
        try await open(SQLLogging(logger: logger, slowStatementThreshold: nil)) { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            _ = try await airports.fetch(where: \.country == "NO")
            _ = try await airports.count()
            _ = try await store.write { tx in try await tx.repository(TestAirport.self).remove(where: \.country == "US")
            }
            // Setting PostgreSQL up (installing Depot's functions) is an .info line; nothing else is.
            let unexpected = lines.lines.filter { !$0.message.hasPrefix("installing Depot's functions") }
            #expect(unexpected.isEmpty, "\(unexpected.map(\.fullText))")
        }
    }

    /// A statement slower than the threshold is a `.warning` naming it, even when statements are
    /// not traced.
    static func slowStatementsWarn<Engine: SQLEngine>(_ open: Open<Engine>) async throws {
        let (logger, lines) = CapturingLogHandler.logger(level: .warning)
        try await open(SQLLogging(logger: logger, slowStatementThreshold: .zero)) { store in
            let airports = store.repository(TestAirport.self)
            try await airports.insert(TestAirport.sample)
            lines.clear()
            _ = try await airports.fetch(where: \.country == "NO")
            let warning = lines.lines.first { $0.message.contains("SELECT") }
            #expect(warning?.level == .warning)
            #expect(
                warning?.message.hasPrefix("slow statement (over 0.0 seconds): SELECT") == true,
                "\(warning?.message ?? "")")
            #expect(warning?.metadata["duration_ms"] != nil)
            #expect(warning?.metadata["arguments"] == "[1 value redacted]")
        }
    }

    /// A commit at `.debug` with the tables written and its duration; a rollback with its reason.
    static func transactionsAtDebug<Engine: SQLEngine>(_ open: Open<Engine>) async throws {
        let (logger, lines) = CapturingLogHandler.logger(level: .debug)
        try await open(SQLLogging(logger: logger)) { store in
            try await store.write { tx in try await tx.repository(TestAirport.self).insert(TestAirport.sample) }
            let commit = lines.lines.last { $0.message == "transaction committed" }
            #expect(commit?.level == .debug)
            #expect(commit?.metadata["tables"] == .array(["airports"]), "\(commit?.fullText ?? "none")")
            #expect(commit?.metadata["duration_ms"] != nil)

            await #expect(throws: Refused.self) {
                try await store.write { tx in
                    try await tx.repository(TestAirport.self).remove(where: \.country == "NO")
                    throw Refused()
                }
            }
            let rollback = lines.lines.last { $0.message == "transaction rolled back" }
            #expect(rollback?.level == .debug)
            #expect(rollback?.metadata["error"] == "the body refused on purpose", "\(rollback?.fullText ?? "none")")
        }
    }

    /// Each migration step at `.info`, and where the migration ended.
    static func migrationsAtInfo<Engine: SQLEngine>(_ open: Open<Engine>) async throws {
        let (logger, lines) = CapturingLogHandler.logger(level: .info)
        try await open(SQLLogging(logger: logger, slowStatementThreshold: nil)) { store in
            try await store.migrate(
                Migrations([
                    Migration("1 airports", [.createTable(TestAirport.self)]),
                    Migration("2 no city", [.dropColumn("city", from: "airports")]),
                ]))
            let messages = lines.lines.filter { $0.level == .info }.map(\.message)
                .filter { !$0.hasPrefix("installing Depot's functions") }
            #expect(
                messages == [
                    "migration step 1 of 2: 1 airports", "migration step 2 of 2: 2 no city",
                    "migrated from version 0 to 2",
                ])
        }
    }
}
