import Depot
import DepotSQL
import DepotTestSupport
import Logging
import MetricsTestKit
import Testing

@testable import DepotPostgres

/// A note of the replica tests.
private struct ReplicaNote: Entity, Equatable {
    var id: String
    var text: String

    static let schema = Schema<ReplicaNote>("replica_notes", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.text, "text")
    }
}

@Suite("Positions in PostgreSQL's write-ahead log")
struct WALPositionTests {
    @Test("an LSN reads as two hexadecimal halves, compares by position and prints as PostgreSQL does")
    func parsesAndCompares() throws {
        let early = try #require(WALPosition("0/4016260"))
        let late = try #require(WALPosition("16/B374D848"))
        #expect(early.value == 0x0401_6260)
        #expect(late.value == 0x16 << 32 | 0xB374_D848)
        #expect(early < late && WALPosition("0/FFFFFFFF")! < WALPosition("1/0")!)
        #expect(late.description == "16/B374D848")
        for text in ["", "0", "0/", "/1", "G/1", "0/123456789", "1/2/3", " 0/1"] {
            #expect(WALPosition(text) == nil, "'\(text)'")
        }
    }

    @Test("a replica URL that is not a postgres:// URL fails every operation, naming the setting")
    func badReplicaURL() async throws {
        var configuration = PostgresStore.Configuration(host: "127.0.0.1", username: "app")
        configuration.replicaURLs = ["postgres://app@127.0.0.1/app", "http://replica/app"]
        let store = PostgresStore(configuration: configuration)
        let error = await #expect(throws: DepotError.self) { try await store.repository(ReplicaNote.self).count() }
        #expect(
            error?.kind == .connection && error?.message.contains("replicaURLs[1]") == true,
            "\(String(describing: error))")
        await store.close()
    }
}

/// A primary with a streaming standby of the test's own (`.ci/postgres standby`): reads, writes,
/// delays and a stopped standby.
@Suite(
    "PostgreSQL read replicas", .serialized,
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct PostgresReplicaTests {
    private static let notes = (1...3).map { ReplicaNote(id: "n\($0)", text: "note \($0)") }

    /// A store on `cluster` reading from `standby`, checking it every 50 ms.
    private static func store(
        _ cluster: ThrowawayCluster, standby: String, metrics: TestMetrics? = nil, logger: Logger? = nil,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in }
    ) throws -> PostgresStore {
        var configuration = try PostgresStore.Configuration(url: cluster.url + "?connect_timeout=60")
        configuration.replicaURLs = [standby]
        configuration.replicaCheckInterval = .milliseconds(50)
        configuration.maximumConnections = 4
        if let metrics { configuration.metrics = SQLMetrics(factory: metrics) }
        if let logger { configuration.logging = SQLLogging(logger: logger) }
        configure(&configuration)
        return PostgresStore(configuration: configuration)
    }

    /// Waits until the store's replica is in `state` (the suite's time limit bounds it).
    private static func waitUntil(_ store: PostgresStore, is state: String) async throws {
        while store.replicaStates != [state] { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// How many of the standby's sessions of Depot's replica pool last ran a statement reading
    /// `replica_notes`.
    private static func standbySessionsReadingNotes(_ standby: String) async throws -> Int {
        let rows = try await PostgresTestServer.rawRows(
            "SELECT count(*)::text FROM pg_stat_activity WHERE application_name = 'depot reads' "
                + "AND query LIKE '%replica_notes%' AND query LIKE 'SELECT%'", url: standby)
        return Int(rows.first?.first.flatMap { $0 } ?? "0") ?? 0
    }

    @Test("what follows a transaction under way (a migration's build progress) reads the primary, not the standby")
    func followingReadsThePrimary() async throws {
        try await HeavyHarness.run {
            try await ThrowawayCluster.with { cluster in
                let standby = try await cluster.startStandby()
                let store = try Self.store(cluster, standby: standby)
                try await withCleanup {
                    try await Self.waitUntil(store, is: "serving")
                    let recovery = SQLStatement(sql: "SELECT pg_is_in_recovery()::text")
                    // Plain reads go to the standby …
                    #expect(try await store.rows(SQL(stringLiteral: recovery.sql)).rows == [[.text("true")]])
                    // … what a transaction's session reads elsewhere goes to the primary, where
                    // pg_stat_progress_create_index shows its CREATE INDEX.
                    let read = try await store.transaction { tx in
                        let session = try #require(tx as? any SQLMigrationSession)
                        return try await session.textsElsewhere(recovery)
                    }
                    #expect(read == [["false"]])
                } cleanup: {
                    await store.close()
                }
            }
        }
    }

    @Test("reads go to a serving standby, writes to the primary; the standby's own sessions ran the reads")
    func readsGoToTheStandby() async throws {
        try await HeavyHarness.run {
            try await ThrowawayCluster.with { cluster in
                let standby = try await cluster.startStandby()
                let metrics = TestMetrics()
                let store = try Self.store(cluster, standby: standby, metrics: metrics)
                try await withCleanup {
                    let notes = store.repository(ReplicaNote.self)
                    try await notes.insert(Self.notes)
                    try await Self.waitUntil(store, is: "serving")
                    #expect(try await notes.fetch(orderBy: [.ascending(\.id)]) == Self.notes)
                    #expect(try await notes.count(where: \.text == "note 2") == 1)
                    let replica = [
                        ("system", "postgresql"), ("replica", try PostgresStore.Configuration(url: standby).address),
                    ]
                    #expect(metrics.counterTotal(label: "depot_replica_reads_total", dimensions: replica) >= 2)
                    #expect(try metrics.expectGauge("depot_replica_serving", replica).lastValue == 1)
                    #expect(try await Self.standbySessionsReadingNotes(standby) >= 1, "the standby ran the reads")
                    // A write on the standby would fail: the insert above went to the primary.
                    try await notes.upsert(ReplicaNote(id: "n1", text: "changed"))
                    #expect(try await notes.find("n1")?.text == "changed", "this store reads its own write")
                } cleanup: {
                    await store.close()
                }
            }
        }
    }

    @Test(
        "a standby applying changes late: the writing store reads its own writes (from the primary), another store reads the standby's older state, observers see the latest"
    )
    func readYourWritesUnderDelay() async throws {
        try await HeavyHarness.run {
            try await ThrowawayCluster.with { cluster in
                // Far longer than the test: the standby stays behind every write it makes.
                let standby = try await cluster.startStandby(delay: .seconds(600))
                let metrics = TestMetrics()
                let lenient: (inout PostgresStore.Configuration) -> Void = {
                    $0.maximumReplicaLag = .seconds(86_400)
                    $0.readYourWritesWait = .milliseconds(100)
                }
                let writer = try Self.store(cluster, standby: standby, metrics: metrics, configure: lenient)
                let reader = try Self.store(cluster, standby: standby, configure: lenient)
                try await withCleanup {
                    // The writer installs Depot's functions (a write: the reader's reads need not wait).
                    #expect(try await writer.repository(ReplicaNote.self).count() == 0)
                    try await Self.waitUntil(writer, is: "serving")
                    try await Self.waitUntil(reader, is: "serving")
                    var changes = reader.repository(ReplicaNote.self).observe(orderBy: [.ascending(\.id)])
                        .makeAsyncIterator()
                    #expect(try await changes.next() == [])
                    #expect(await reader.waitUntilListening())
                    try await writer.repository(ReplicaNote.self).insert(Self.notes)
                    #expect(
                        try await writer.repository(ReplicaNote.self).fetch(orderBy: [.ascending(\.id)]) == Self.notes)
                    #expect(
                        metrics.counterTotal(
                            label: "depot_primary_reads_total",
                            dimensions: [("system", "postgresql"), ("reason", "behind_own_write")]) >= 1)
                    // The other store reads the standby, which has not applied the insert (nor the table).
                    #expect(try await reader.repository(ReplicaNote.self).count() == 0)
                    // Its observer reads the primary after the commit it heard of.
                    var seen = try await changes.next()
                    while seen?.count != Self.notes.count { seen = try await changes.next() }
                    #expect(seen == Self.notes)
                } cleanup: {
                    await writer.close()
                    await reader.close()
                }
            }
        }
    }

    @Test("a read after a write waits for the standby to replay it, then reads there")
    func readWaitsForReplay() async throws {
        try await HeavyHarness.run {
            try await ThrowawayCluster.with { cluster in
                let standby = try await cluster.startStandby(delay: .milliseconds(300))
                let metrics = TestMetrics()
                let store = try Self.store(cluster, standby: standby, metrics: metrics) {
                    $0.maximumReplicaLag = .seconds(86_400)
                    $0.readYourWritesWait = .seconds(60)
                }
                try await withCleanup {
                    try await Self.waitUntil(store, is: "serving")
                    let replica = [
                        ("system", "postgresql"), ("replica", try PostgresStore.Configuration(url: standby).address),
                    ]
                    let before = metrics.counterTotal(label: "depot_replica_reads_total", dimensions: replica)
                    try await store.repository(ReplicaNote.self).insert(Self.notes)
                    #expect(
                        try await store.repository(ReplicaNote.self).fetch(orderBy: [.ascending(\.id)]) == Self.notes)
                    #expect(metrics.counterTotal(label: "depot_replica_reads_total", dimensions: replica) == before + 1)
                    #expect(
                        metrics.counterTotal(
                            label: "depot_primary_reads_total",
                            dimensions: [("system", "postgresql"), ("reason", "behind_own_write")]) == 0)
                } cleanup: {
                    await store.close()
                }
            }
        }
    }

    @Test("a stopped standby is skipped with a warning naming it, reads go on, and it serves again once back")
    func stoppedStandbyIsSkipped() async throws {
        try await HeavyHarness.run {
            try await ThrowawayCluster.with { cluster in
                let standby = try await cluster.startStandby()
                let (logger, log) = CapturingLogHandler.logger(level: .notice)
                let store = try Self.store(cluster, standby: standby, logger: logger) {
                    $0.replicaTimeout = .seconds(1)
                }
                let address = try PostgresStore.Configuration(url: standby).address
                try await withCleanup {
                    let notes = store.repository(ReplicaNote.self)
                    try await notes.insert(Self.notes)
                    try await Self.waitUntil(store, is: "serving")
                    #expect(try await notes.count() == 3)
                    try await cluster.haltStandby()
                    // Whether the read or a check finds it gone first, the read is answered.
                    #expect(try await notes.fetch(orderBy: [.ascending(\.id)]) == Self.notes)
                    try await Self.waitUntil(store, is: "unavailable")
                    #expect(try await notes.count() == 3)
                    let warnings = log.lines.filter { $0.level == .warning && $0.message.contains(address) }
                    #expect(!warnings.isEmpty, "\(log.lines.map(\.message))")
                    try await cluster.resumeStandby()
                    try await Self.waitUntil(store, is: "serving")
                    #expect(
                        log.lines.contains { $0.level == .notice && $0.message.contains("\(address) serves reads") })
                    #expect(try await notes.count() == 3)
                } cleanup: {
                    await store.close()
                }
            }
        }
    }
}
