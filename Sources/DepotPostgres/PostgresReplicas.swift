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

    /// What a replica answers about itself: whether it is a standby, and what it has replayed.
    static let checkSQL = "SELECT pg_is_in_recovery(), COALESCE(pg_last_wal_replay_lsn()::text, '')"

    /// The position a replica has replayed.
    static let replayedSQL = "SELECT COALESCE(pg_last_wal_replay_lsn()::text, '')"

    /// The end of the primary's log as written (what a replica has to replay to be current).
    static let primaryPositionSQL = "SELECT pg_current_wal_insert_lsn()::text"
}

/// The primary's log position over time, sampled by the monitor: how long ago the primary was
/// past a position tells how far behind a replica that has replayed only up to it is, on the
/// primary's clock (no clock skew), whether the replica still streams or not.
struct PrimaryHistory: Sendable {
    private var samples: [(at: ContinuousClock.Instant, position: WALPosition)] = []

    /// Records where the primary's log ended at `instant`, keeping the samples of the last `span`.
    mutating func record(_ position: WALPosition, at instant: ContinuousClock.Instant, keeping span: Duration) {
        samples.append((instant, position))
        if let first = samples.firstIndex(where: { instant - $0.at <= span }), first > 0 {
            // Keep one sample older than the span: it bounds the lag of a replica behind all others.
            samples.removeFirst(first - 1)
        }
    }

    /// How far behind a replica that has replayed up to `replayed` is at `now`: since the first
    /// sample it has not replayed (zero when it has replayed the latest); `nil` before any sample.
    func lag(of replayed: WALPosition, at now: ContinuousClock.Instant) -> Duration? {
        guard let latest = samples.last else { return nil }
        if replayed >= latest.position { return .zero }
        guard let first = samples.first(where: { $0.position > replayed }) else { return .zero }
        return now - first.at
    }
}

/// Where reads go when replicas are configured, and the metrics that say so.
final class ReplicaRouting: Sendable {
    let replicas: [PostgresReplica]
    /// The end of this store's latest committed write on the primary.
    private let lastWrite = Atomic<UInt64>(0)
    /// Writes whose end could not be read after their commit and is not recovered yet: reads go to
    /// the primary meanwhile.
    private let unknownWrites = Atomic<Int>(0)
    private let next = Atomic<Int>(0)
    private let meters: ReplicaMeters
    private let logger: Logger
    private let monitor: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let history = Mutex(PrimaryHistory())

    init(replicas: [PostgresReplica], metrics: SQLMetrics, logger: Logger) {
        self.replicas = replicas
        self.meters = ReplicaMeters(metrics, replicas: replicas.map(\.address))
        self.logger = logger
    }

    /// Starts checking every replica every `interval`, each on its own (a replica that hangs
    /// delays no other's check), and sampling the primary's position with `primaryPosition`.
    func startMonitoring(
        interval: Duration, timeout: Duration, maximumLag: Duration,
        primaryPosition: @escaping @Sendable () async throws -> WALPosition
    ) {
        monitor.withLock { task in
            guard task == nil, !replicas.isEmpty else { return }
            task = Task { [replicas, weak self] in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        while !Task.isCancelled {
                            if let position = try? await primaryPosition() {
                                self?.history.withLock {
                                    $0.record(position, at: .now, keeping: maximumLag + interval * 2)
                                }
                            }
                            try? await Task.sleep(for: interval)
                        }
                    }
                    for replica in replicas {
                        group.addTask {
                            while !Task.isCancelled {
                                await self?.check(replica, timeout: timeout, maximumLag: maximumLag)
                                try? await Task.sleep(for: interval)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Stops the checks (waiting for them), then closes the replicas' pools.
    func close() async {
        let task = monitor.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
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

    /// A write committed but its end could not be read: reads go to the primary until
    /// `position` — the primary's position read later, which covers it — is had.
    func lostPosition(recover position: @escaping @Sendable () async throws -> WALPosition) {
        unknownWrites.add(1, ordering: .acquiringAndReleasing)
        Task { [weak self] in
            var pause = Duration.milliseconds(50)
            while self != nil {
                if let position = try? await position() {
                    self?.wrote(upTo: position)
                    self?.unknownWrites.subtract(1, ordering: .acquiringAndReleasing)
                    return
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    /// Whether a write of this store has an end not known yet (reads go to the primary).
    var hasUnknownWrites: Bool { unknownWrites.load(ordering: .acquiring) > 0 }

    /// The end of this store's latest write, which a replica must have replayed before it serves
    /// this store's reads.
    var neededPosition: WALPosition { WALPosition(value: lastWrite.load(ordering: .acquiring)) }

    /// The replicas to try, in turn, starting with the next one round the ring.
    var rotation: [PostgresReplica] {
        let start = next.add(1, ordering: .relaxed).oldValue
        return replicas.indices.map { replicas[(start &+ $0) % replicas.count] }
    }

    /// Checks `replica` within `timeout` in all: whether it is a standby, what it has replayed,
    /// how far behind the primary that is; logs and counts a change.
    func check(_ replica: PostgresReplica, timeout: Duration, maximumLag: Duration) async {
        let status: PostgresReplica.Status
        do {
            let answer = try await PostgresEngine.leased(
                client: replica.checker, address: replica.address, timeout: timeout, pool: nil, answerWithin: timeout,
                abandonable: true
            ) { connection in
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: PostgresReplica.checkSQL), logger: PostgresOperations.logger)
                var answer: (Bool, String)?
                for try await row in rows.decode((Bool, String).self) { answer = row }
                return answer
            }
            guard let (isStandby, replayedText) = answer else {
                throw DepotError(.storage, "the replica answered no row")
            }
            if !isStandby {
                status = .unavailable("it is not a standby (pg_is_in_recovery() is false)")
            } else {
                if let position = WALPosition(replayedText) { replica.replayed(position) }
                let replayed = replica.state.withLock { $0.replayed }
                if let lag = history.withLock({ $0.lag(of: replayed, at: .now) }) {
                    status = lag > maximumLag ? .lagging(lag) : .serving
                    meters.lag(
                        replica.address,
                        seconds: Double(lag.components.seconds) + Double(lag.components.attoseconds) / 1e18)
                } else {
                    status = .unchecked  // the primary's position is not known yet
                }
            }
        } catch is CancellationError {
            return
        } catch {
            if Task.isCancelled { return }
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
        // The log hears of a change of kind only (not of every new lag or message).
        switch (previous, status) {
        case (.serving, .serving), (.lagging, .lagging), (.unavailable, .unavailable), (.unchecked, .unchecked):
            return
        default:
            break
        }
        let metadata: Logger.Metadata = ["replica": "\(replica.address)"]
        switch status {
        case .serving:
            logger.notice("replica \(replica.address) serves reads", metadata: metadata)
        case .lagging(let lag):
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
        /// The replica failed the read (lost connection, a conflict with recovery, a table or
        /// function it has not replayed yet) or had no connection free in time.
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
