import Depot
import DepotPostgres
import DepotTestSupport
import DepotTesting
import Foundation
import Synchronization
import Testing

/// A row of the server-fault tests.
struct FaultRow: Entity, Equatable {
    var id: Int
    var note: String
    static let schema = Schema<FaultRow>("fault_rows", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.note, "note")
    }
}

/// The table the interrupted migration creates and fills.
struct FaultExtra: Entity, Equatable {
    var id: Int
    static let schema = Schema<FaultExtra>("fault_extras", primaryKey: \.id) { Column(\.id, "id") }
}

/// What happens to the server in the middle of the work.
enum ServerFault: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Stopped by an administrator (fast shutdown: sessions ended), started again later.
    case halted
    /// The postmaster and every process it started killed with SIGKILL, started again later
    /// (crash recovery from the write-ahead log).
    case killed
    /// The sessions in a transaction killed with SIGKILL: the server ends every session and
    /// restarts on its own.
    case sessionsCrashed

    var testDescription: String { rawValue }
}

/// The step a fault test has reached, for the message when it hangs.
final class Steps: Sendable {
    private let current = Mutex("starting")
    func begin(_ step: String) { current.withLock { $0 = step } }
    var last: String { current.withLock { $0 } }
}

/// A gate a transaction waits at, so the fault lands while it is open on the server.
struct Gate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }
    func wait() async { for await _ in stream { return } }
    func open() { continuation.yield() }
}

@Suite(
    "PostgreSQL server faults", .serialized,
    .enabled(if: PostgresEnvironment.isConfigured, "DEPOT_POSTGRES_URL is not set"),
    .timeLimit(.minutes(HeavyHarness.suiteLimitMinutes)))
struct PostgresServerFaultTests {
    static let migrations = Migrations([
        Migration("1 rows", [.createTable(FaultRow.self)])
    ])

    /// Version 2: a table filled in two halves, the fault landing between them.
    static func interrupted(_ inside: Gate, _ gate: Gate) -> Migrations {
        var steps = migrations.steps
        steps.append(
            Migration(
                "2 extras",
                [
                    .createTable(FaultExtra.self),
                    .data("extras") { tx in
                        try await tx.repository(FaultExtra.self).insert((1...500).map { FaultExtra(id: $0) })
                        inside.open()
                        await gate.wait()
                        try await tx.repository(FaultExtra.self).insert((501...1000).map { FaultExtra(id: $0) })
                    },
                ]))
        return Migrations(steps)
    }

    @Test(
        "a server stopped or killed mid-transaction, mid-migration and mid-observation: calls fail with .connection, nothing is half-written, the same stores and observers carry on once it is back",
        arguments: ServerFault.allCases)
    func fault(_ fault: ServerFault) async throws {
        let steps = Steps()
        do {
            try await harness(fault, steps)
        } catch let timedOut as HeavyHarness.TimedOut {
            // A hang names where it hung.
            Issue.record("\(timedOut); the last step begun: \(steps.last)")
        } catch {
            // So does a failure.
            Issue.record("\(error); the last step begun: \(steps.last)")
        }
    }

    func harness(_ fault: ServerFault, _ steps: Steps) async throws {
        try await HeavyHarness.run {
            try await ThrowawayCluster.with { cluster in
                var configuration = try PostgresStore.Configuration(url: cluster.url)
                // Short, so that the stopped server is noticed promptly; with the server up, a lease
                // can still take longer than this on a loaded 2-core machine (a CI run waited over
                // 2 s with statements taking 12 s), so the calls made with the server up go through
                // `up` and try again while no connection could be had.
                configuration.connectTimeout = .seconds(5)
                let store = PostgresStore(configuration: configuration)
                let other = PostgresStore(configuration: configuration)  // another process, in effect
                try await withCleanup { () async throws in
                    try await run(fault, cluster, store, other, steps)
                } cleanup: {
                    await store.close()
                    await other.close()
                }
            }
        }
    }

    func run(
        _ fault: ServerFault, _ cluster: ThrowawayCluster, _ store: PostgresStore, _ other: PostgresStore,
        _ steps: Steps
    ) async throws {
        let rows = store.repository(FaultRow.self)
        steps.begin("migrating and inserting before the fault")
        _ = try await up { try await store.migrate(Self.migrations) }
        try await up { try await rows.upsert((1...100).map { FaultRow(id: $0, note: "before") }) }

        // An observer of the whole table, running through the fault.
        let observed = Mutex<(rows: [FaultRow], updates: Int, ended: String?)>(([], 0, nil))
        let observer = Task {
            do {
                for try await list in rows.observe(orderBy: [.ascending(\.id)]) {
                    observed.withLock {
                        $0.rows = list
                        $0.updates += 1
                    }
                }
                observed.withLock { $0.ended = "ended" }
            } catch {
                observed.withLock { $0.ended = "\(error)" }
            }
        }
        defer { observer.cancel() }
        steps.begin("waiting for the observer's first result")
        #expect(await eventually { observed.withLock { $0.rows.count } == 100 })

        // A transaction and a migration, each waiting on the server with rows written.
        // A reader counting the rows over and over, through the fault: each count is the committed
        // one or a .connection error, never a count with the open transaction's rows in it.
        let reader = Task { () -> (counted: Int, failed: Int, wrong: [String]) in
            var (counted, failed, wrong) = (0, 0, [String]())
            while !Task.isCancelled {
                do {
                    let count = try await rows.count()
                    if count == 100 { counted += 1 } else { wrong.append("count \(count)") }
                } catch let error as DepotError where error.kind == .connection {
                    failed += 1
                } catch is CancellationError {
                    break
                } catch {
                    wrong.append("\(error)")
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return (counted, failed, wrong)
        }
        let (txInside, txGate, migrationInside, migrationGate) = (Gate(), Gate(), Gate(), Gate())
        // One after the other, in a fixed order (either order passes). Either one failing before
        // its gate opens its gate too, and fails the checks below instead of leaving this test
        // waiting for good (a CI run hung in this test once; where is not known: the steps say now).
        let transaction = Task {
            do {
                try await store.write { tx in
                    try await tx.repository(FaultRow.self).insert((101...200).map { FaultRow(id: $0, note: "torn") })
                    txInside.open()
                    await txGate.wait()
                    try await tx.repository(FaultRow.self).insert((201...300).map { FaultRow(id: $0, note: "torn") })
                }
            } catch {
                txInside.open()
                throw error
            }
        }
        steps.begin("waiting for the transaction to be open with rows written")
        await txInside.wait()
        let migration = Task {
            do {
                try await other.migrate(Self.interrupted(migrationInside, migrationGate))
            } catch {
                migrationInside.open()
                throw error
            }
        }
        steps.begin("waiting for the migration to be open with rows written")
        await migrationInside.wait()
        steps.begin("the fault")

        switch fault {
        case .halted: try await cluster.halt()
        case .killed: try await cluster.killServer()
        case .sessionsCrashed:
            let killed = try await cluster.crashSessions(in: "in transaction")
            #expect(killed >= 2, "the transaction's and the migration's sessions")
        }
        txGate.open()
        migrationGate.open()
        let clock = ContinuousClock()
        let failed = clock.now
        steps.begin("waiting for the transaction and the migration to fail")
        let transactionError = await #expect(throws: DepotError.self) { try await transaction.value }
        #expect(transactionError?.kind == .connection, "\(String(describing: transactionError))")
        let migrationError = await #expect(throws: DepotError.self) { try await migration.value }
        #expect(
            migrationError?.kind == .connection || migrationError?.message.contains("connection") == true,
            "\(String(describing: migrationError))")
        print("server \(fault): the open transaction and migration failed after \(clock.now - failed)")

        if fault != .sessionsCrashed {
            // While the server is down, reads and writes fail with .connection, promptly.
            steps.begin("a read and a write while the server is down")
            let start = clock.now
            let read = await #expect(throws: DepotError.self) { _ = try await rows.count() }
            #expect(read?.kind == .connection, "\(String(describing: read))")
            let write = await #expect(throws: DepotError.self) { try await rows.upsert(FaultRow(id: 1, note: "down")) }
            #expect(write?.kind == .connection, "\(String(describing: write))")
            let took = clock.now - start
            print(
                "server \(fault): a read and a write against the stopped server failed in \(took) (connect timeout 5 s)"
            )
            steps.begin("resuming the server")
            try await cluster.resume()
        }

        // Back: nothing of the torn transaction or migration, and the same stores work.
        steps.begin("reading after the fault, then stopping the reader")
        let back = try await up { try await rows.fetchAll() }
        reader.cancel()
        let reads = await reader.value
        #expect(reads.wrong.isEmpty, "reads during the fault: \(reads.wrong)")
        #expect(reads.counted > 0)
        print(
            "server \(fault): \(reads.counted) reads counted the committed rows, \(reads.failed) failed with .connection"
        )
        #expect(back == (1...100).map { FaultRow(id: $0, note: "before") }, "nothing half-written")
        #expect(try await up { try await store.appliedMigrations() }.map(\.name) == ["1 rows"])
        let missing = await #expect(throws: DepotError.self) {
            try await up { try await store.checkSchema(of: [FaultExtra.self]) }
        }
        #expect(missing?.kind != .connection, "\(String(describing: missing))")
        steps.begin("migrating again and writing after the fault")
        let unblocked = Gate()
        unblocked.open()
        _ = try await up { try await other.migrate(Self.interrupted(Gate(), unblocked)) }
        #expect(try await up { try await other.repository(FaultExtra.self).count() } == 1000)

        try await up { try await rows.upsert(FaultRow(id: 1, note: "after, by this store")) }
        try await up {
            try await other.repository(FaultRow.self).upsert(FaultRow(id: 101, note: "after, by another store"))
        }
        let expected = try await up { try await rows.fetchAll() }
        #expect(expected.count == 101)
        // The observer saw the fault through and ends on the final state, without a restart.
        steps.begin("waiting for the observer's final result")
        #expect(
            await eventually { observed.withLock { $0.rows } == expected },
            "\(observed.withLock { $0.rows.count }) rows observed")
        #expect(observed.withLock { $0.ended } == nil, "the observation goes on")
        print("server \(fault): the observer delivered \(observed.withLock { $0.updates }) results")
    }

    /// `call`, with the server up: tried again while no connection could be had in time (each
    /// call is one that can be repeated: upserts, reads, a migration to a version).
    @discardableResult
    func up<T>(_ call: () async throws -> T) async throws -> T {
        try await PostgresReconnectTests.whileStalled(call)
    }
}
