import CoreMetrics
import Depot
import DepotSQL
import Foundation
import Logging
import Metrics
import PostgresNIO
import Synchronization

/// A position in PostgreSQL's write-ahead log (`pg_lsn`, written `16/B374D848`).
struct WALPosition: Comparable, Sendable, CustomStringConvertible {
    let value: UInt64

    static let zero = WALPosition(value: 0)

    init(value: UInt64) { self.value = value }

    /// The position `text` spells (two hexadecimal halves around a `/`), or `nil`.
    init?(_ text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, (1...8).contains(halves[0].count), (1...8).contains(halves[1].count),
            let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16)
        else { return nil }
        value = high << 32 | low
    }

    static func < (a: WALPosition, b: WALPosition) -> Bool { a.value < b.value }

    var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }
}

/// A streaming replica reads may go to: its own pool, and what the last check found.
final class PostgresReplica: Sendable {
    /// What the last check found.
    enum Status: Sendable, Equatable {
        /// Not checked yet: reads go elsewhere.
        case unchecked
        /// Replaying the primary's log, within the lag allowed.
        case serving
        /// Further behind than allowed.
        case lagging(Duration)
        /// Not answering, or not a standby.
        case unavailable(String)
    }

    struct State {
        var status = Status.unchecked
        /// The furthest position the replica was seen to have replayed.
        var replayed = WALPosition.zero
    }

    let configuration: PostgresEngine.Configuration
    /// The pool reads borrow from.
    let client: PostgresClient
    /// One connection of its own for the checks, so that a pool busy with reads does not make a
    /// check wait (and the replica look unavailable).
    let checker: PostgresClient
    private let runTask: Task<Void, Never>
    let state = Mutex(State())
    /// `host:port/database`, for messages, logs and metric dimensions.
    var address: String { configuration.address }

    init(configuration: PostgresEngine.Configuration, client: PostgresClient, checker: PostgresClient) {
        self.configuration = configuration
        self.client = client
        self.checker = checker
        runTask = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                group.addTask { await checker.run() }
            }
        }
    }

    deinit { runTask.cancel() }

    func close() async {
        runTask.cancel()
        await runTask.value
    }

    /// The position the replica has replayed, when it may serve reads now.
    var servingPosition: WALPosition? {
        state.withLock { $0.status == .serving ? $0.replayed : nil }
    }

    /// Records that the replica has replayed at least `position`.
    func replayed(_ position: WALPosition) {
        state.withLock { $0.replayed = max($0.replayed, position) }
    }

    /// Sets what a check or a read found; returns the status it replaces.
    func set(_ status: Status) -> Status {
        state.withLock { state in
            defer { state.status = status }
            return state.status
        }
    }

    /// What a replica answers about itself: whether it is a standby, what it has replayed, and
    /// how far it is behind (0 when it has replayed all it received).
    static let checkSQL = """
        SELECT pg_is_in_recovery(), COALESCE(pg_last_wal_replay_lsn()::text, ''), \
        (CASE WHEN pg_last_wal_receive_lsn() IS NULL OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0 \
        ELSE COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0) END)::float8
        """

    /// The position a replica has replayed.
    static let replayedSQL = "SELECT COALESCE(pg_last_wal_replay_lsn()::text, '')"
}

/// Where reads go when replicas are configured, and the metrics that say so.
final class ReplicaRouting: Sendable {
    let replicas: [PostgresReplica]
    /// The end of this store's latest committed write on the primary.
    private let lastWrite = Atomic<UInt64>(0)
    private let next = Atomic<Int>(0)
    private let meters: ReplicaMeters
    private let logger: Logger
    private let monitor: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(replicas: [PostgresReplica], metrics: SQLMetrics, logger: Logger) {
        self.replicas = replicas
        self.meters = ReplicaMeters(metrics, replicas: replicas.map(\.address))
        self.logger = logger
    }

    /// Starts checking every replica every `interval` (once).
    func startMonitoring(interval: Duration, timeout: Duration, maximumLag: Duration) {
        monitor.withLock { task in
            guard task == nil, !replicas.isEmpty else { return }
            task = Task { [replicas, weak self] in
                while !Task.isCancelled {
                    await withTaskGroup(of: Void.self) { group in
                        for replica in replicas {
                            group.addTask { await self?.check(replica, timeout: timeout, maximumLag: maximumLag) }
                        }
                    }
                    try? await Task.sleep(for: interval)
                }
            }
        }
    }

    func close() async {
        monitor.withLock { $0?.cancel() }
        for replica in replicas { await replica.close() }
    }

    deinit { monitor.withLock { $0?.cancel() } }

    /// Records that this store's write ended at `position` on the primary.
    func wrote(upTo position: WALPosition) {
        var current = lastWrite.load(ordering: .acquiring)
        while position.value > current {
            let (exchanged, original) = lastWrite.compareExchange(
                expected: current, desired: position.value, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// The end of this store's latest write, which a replica must have replayed before it serves
    /// this store's reads.
    var neededPosition: WALPosition { WALPosition(value: lastWrite.load(ordering: .acquiring)) }

    /// The replicas to try, in turn, starting with the next one round the ring.
    var rotation: [PostgresReplica] {
        let start = next.add(1, ordering: .relaxed).oldValue
        return replicas.indices.map { replicas[(start &+ $0) % replicas.count] }
    }

    /// Checks `replica`: what it has replayed, how far behind it is; logs and counts a change.
    func check(_ replica: PostgresReplica, timeout: Duration, maximumLag: Duration) async {
        let status: PostgresReplica.Status
        do {
            let answer = try await PostgresEngine.leased(
                client: replica.checker, address: replica.address, timeout: timeout, pool: nil
            ) { connection in
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: PostgresReplica.checkSQL), logger: PostgresOperations.logger)
                var answer: (Bool, String, Double)?
                for try await row in rows.decode((Bool, String, Double).self) { answer = row }
                return answer
            }
            guard let (isStandby, replayedText, lagSeconds) = answer else {
                throw DepotError(.storage, "the replica answered no row")
            }
            if !isStandby {
                status = .unavailable("it is not a standby (pg_is_in_recovery() is false)")
            } else {
                if let position = WALPosition(replayedText) { replica.replayed(position) }
                let lag = Duration.milliseconds(Int64((lagSeconds * 1000).rounded()))
                status = lag > maximumLag ? .lagging(lag) : .serving
                meters.lag(replica.address, seconds: lagSeconds)
            }
        } catch is CancellationError {
            return
        } catch {
            status = .unavailable(Self.describe(error))
        }
        record(status, of: replica, maximumLag: maximumLag)
    }

    /// A read found `replica` unreachable: it serves no reads until a check finds it back.
    func failed(_ replica: PostgresReplica, _ error: any Error) {
        record(.unavailable(Self.describe(error)), of: replica, maximumLag: nil)
    }

    private func record(_ status: PostgresReplica.Status, of replica: PostgresReplica, maximumLag: Duration?) {
        let previous = replica.set(status)
        meters.serving(replica.address, status == .serving)
        guard previous != status else { return }
        let metadata: Logger.Metadata = ["replica": "\(replica.address)"]
        switch status {
        case .serving:
            logger.notice("replica \(replica.address) serves reads", metadata: metadata)
        case .lagging(let lag):
            if case .lagging = previous { return }
            logger.warning(
                "replica \(replica.address) is \(lag) behind the primary (more than \(maximumLag.map { "\($0)" } ?? "allowed")): reads skip it",
                metadata: metadata)
        case .unavailable(let why):
            logger.warning(
                "replica \(replica.address) is skipped: \(why); reads go to another replica or the primary",
                metadata: metadata)
        case .unchecked:
            break
        }
    }

    /// A read went to the primary although replicas are configured, for `reason`.
    func readOnPrimary(_ reason: ReplicaMeters.Reason) { meters.primaryRead(reason) }

    /// A read was served by `replica`.
    func readOnReplica(_ replica: PostgresReplica) { meters.replicaRead(replica.address) }

    private static func describe(_ error: any Error) -> String {
        (error as? DepotError)?.message ?? "\(error)"
    }
}

/// `depot_replica_serving` (1 or 0) and `depot_replica_lag_seconds` per replica,
/// `depot_replica_reads_total` per replica, and `depot_primary_reads_total` by why a read went to
/// the primary although replicas are configured.
final class ReplicaMeters: Sendable {
    /// Why a read went to the primary.
    enum Reason: String, CaseIterable, Sendable {
        /// No replica served reads (down, lagging, not checked yet).
        case noReplica = "no_replica"
        /// No replica replayed this store's latest write within the wait allowed.
        case behindOwnWrite = "behind_own_write"
        /// The read must see the latest commit (an observer's, a schema check: `FreshReads`).
        case fresh = "fresh_read"
        /// The replica failed the read (lost connection, a conflict with recovery).
        case replicaFailed = "replica_failed"
    }

    private let serving: [String: Gauge]
    private let lag: [String: Gauge]
    private let replicaReads: [String: Counter]
    private let primaryReads: [Reason: Counter]

    init(_ metrics: SQLMetrics, replicas: [String]) {
        guard metrics.isEnabled else {
            serving = [:]
            lag = [:]
            replicaReads = [:]
            primaryReads = [:]
            return
        }
        let base = [("system", "postgresql")] + metrics.dimensions
        var serving: [String: Gauge] = [:]
        var lag: [String: Gauge] = [:]
        var replicaReads: [String: Counter] = [:]
        for address in replicas {
            let dimensions = base + [("replica", address)]
            serving[address] = Gauge(label: "depot_replica_serving", dimensions: dimensions, factory: metrics.factory)
            lag[address] = Gauge(label: "depot_replica_lag_seconds", dimensions: dimensions, factory: metrics.factory)
            replicaReads[address] = Counter(
                label: "depot_replica_reads_total", dimensions: dimensions, factory: metrics.factory)
        }
        self.serving = serving
        self.lag = lag
        self.replicaReads = replicaReads
        var primaryReads: [Reason: Counter] = [:]
        for reason in Reason.allCases {
            primaryReads[reason] = Counter(
                label: "depot_primary_reads_total", dimensions: base + [("reason", reason.rawValue)],
                factory: metrics.factory)
        }
        self.primaryReads = primaryReads
    }

    func serving(_ replica: String, _ isServing: Bool) { serving[replica]?.record(isServing ? 1 : 0) }
    func lag(_ replica: String, seconds: Double) { lag[replica]?.record(seconds) }
    func replicaRead(_ replica: String) { replicaReads[replica]?.increment() }
    func primaryRead(_ reason: Reason) { primaryReads[reason]?.increment() }
}
