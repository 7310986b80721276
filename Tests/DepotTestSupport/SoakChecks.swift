import Depot
import DepotTesting
import Foundation
import Synchronization
import Testing

/// An account of the soak: money moves between accounts, so the total never changes.
public struct SoakAccount: Entity, Equatable {
    /// The account number, the key.
    public var id: Int
    /// What it holds.
    public var balance: Int

    /// An account holding `balance`.
    public init(id: Int, balance: Int) {
        self.id = id
        self.balance = balance
    }

    /// The `soak_accounts` table.
    public static let schema = Schema<SoakAccount>("soak_accounts", primaryKey: \.id) {
        Column(\.id, "id")
        Column(\.balance, "balance")
    }
}

/// The concurrency soak: writers move money between accounts in transactions (read both, write
/// both), readers sum every account, observers watch them all, at once, on one store. Checked:
/// no reader or observer ever sees a total other than the one the accounts started with (no torn
/// state), every account ends with exactly the transfers that committed (no lost update), no
/// error reaches a caller, and observers end on the final state.
public enum SoakChecks {
    /// What a soak measured.
    public struct Report: CustomStringConvertible, Sendable {
        /// Transfers committed.
        public var transfers: Int
        /// Sums read.
        public var reads: Int
        /// Results observers received.
        public var observed: Int
        /// Wall time of the whole soak, in seconds.
        public var seconds: Double
        /// The 99th percentile of a transfer's and a read's latency, in milliseconds.
        public var transferP99: Double
        /// See ``transferP99``.
        public var readP99: Double

        /// `1,200 transfers (412/s, p99 6.1 ms), 3,050 reads (1,047/s, p99 3.2 ms), 310 observed results`.
        public var description: String {
            String(
                format: "%d transfers (%.0f/s, p99 %.2f ms), %d reads (%.0f/s, p99 %.2f ms), %d observed results",
                transfers, Double(transfers) / seconds, transferP99, reads, Double(reads) / seconds, readP99,
                observed)
        }
    }

    /// Transfers per writer: `DEPOT_SOAK_TRANSFERS`, or 100 (the short form `.ci/run` runs).
    public static var transfersPerWriter: Int {
        ProcessInfo.processInfo.environment["DEPOT_SOAK_TRANSFERS"].flatMap(Int.init).map { max(1, $0) } ?? 100
    }

    /// Runs the soak on `store`: `writers` tasks of `transfersEach` transfers, `readers` tasks
    /// reading (at most `readsEach` times each) while the writers run, `observers` observations
    /// of every account. Seeded by `seed`.
    public static func run(
        on store: some Store, accounts: Int = 50, writers: Int = 8, transfersEach: Int = transfersPerWriter,
        readers: Int = 8, readsEach: Int = 4 * transfersPerWriter, observers: Int = 2, seed: UInt64 = 2_026_112_5
    ) async throws -> Report {
        let start = 1_000
        let total = accounts * start
        let repository = store.repository(SoakAccount.self)
        try await repository.insert((0..<accounts).map { SoakAccount(id: $0, balance: start) })
        let log = SoakLog()
        let clock = ContinuousClock()
        let began = clock.now

        // Observers: every result they receive must hold the same total.
        var watchers: [Task<Void, Never>] = []
        for index in 0..<observers {
            let observation = repository.observe(orderBy: [.ascending(\.id)])
            watchers.append(
                Task {
                    do {
                        for try await accounts in observation {
                            log.observed(accounts.reduce(0) { $0 + $1.balance }, expected: total)
                            log.observerHolds(accounts, index: index)
                        }
                    } catch {
                        log.failed("observer \(index): \(error)")
                    }
                })
        }
        defer { for watcher in watchers { watcher.cancel() } }

        log.writersStarted(writers)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var random = SplitMix64(state: seed &+ UInt64(writer))
                    defer { log.writerEnded() }
                    for _ in 0..<transfersEach {
                        let from = Int.random(in: 0..<accounts, using: &random)
                        let other = Int.random(in: 0..<(accounts - 1), using: &random)
                        let to = other >= from ? other + 1 : other
                        let amount = Int.random(in: 1...50, using: &random)
                        let started = clock.now
                        do {
                            try await store.write { tx in
                                let accounts = tx.repository(SoakAccount.self)
                                guard var source = try await accounts.find(from),
                                    var target = try await accounts.find(to)
                                else { throw DepotError(.invalidQuery, "an account is missing") }
                                source.balance -= amount
                                target.balance += amount
                                try await accounts.upsert([source, target])
                            }
                            log.transferred(from: from, to: to, amount: amount, in: clock.now - started)
                        } catch {
                            log.failed("transfer \(from) → \(to): \(error)")
                        }
                    }
                }
            }
            for _ in 0..<readers {
                group.addTask {
                    // While the writers run, at most `readsEach` sums, yielding between them so that
                    // readers cannot keep a store that answers at once (in memory) from its writers.
                    var reads = 0
                    while log.isWriting, reads < readsEach {
                        reads += 1
                        await Task.yield()
                        let started = clock.now
                        do {
                            let sum = try await repository.fetch().reduce(0) { $0 + $1.balance }
                            log.read(sum, expected: total, in: clock.now - started)
                        } catch {
                            log.failed("read: \(error)")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = (clock.now - began).seconds

        let final = try await repository.fetch(orderBy: [.ascending(\.id)])
        var expected = (0..<accounts).map { SoakAccount(id: $0, balance: start) }
        for transfer in log.transfers {
            expected[transfer.from].balance -= transfer.amount
            expected[transfer.to].balance += transfer.amount
        }
        #expect(log.failures.isEmpty, "\(log.failures.prefix(5))")
        #expect(log.tornReads.isEmpty, "sums other than \(total) read: \(log.tornReads.prefix(5))")
        #expect(log.tornObservations.isEmpty, "sums other than \(total) observed: \(log.tornObservations.prefix(5))")
        #expect(log.transfers.count == writers * transfersEach)
        #expect(final == expected, "every committed transfer is in the balances, and nothing else")
        for index in 0..<observers {
            #expect(
                await eventually { log.observerHolding(index) == final },
                "observer \(index) ends on the final balances")
        }
        return Report(
            transfers: log.transfers.count, reads: log.readLatencies.count, observed: log.observations,
            seconds: seconds, transferP99: percentile99(log.transferLatencies), readP99: percentile99(log.readLatencies)
        )
    }

    static func percentile99(_ values: [Duration]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))].seconds * 1000
    }
}

/// What the soak's tasks saw, shared between them.
final class SoakLog: Sendable {
    struct Transfer {
        var from: Int
        var to: Int
        var amount: Int
    }
    private struct State {
        var transfers: [Transfer] = []
        var transferLatencies: [Duration] = []
        var readLatencies: [Duration] = []
        var tornReads: [Int] = []
        var tornObservations: [Int] = []
        var observations = 0
        var failures: [String] = []
        var writers = 0
        var observersHold: [Int: [SoakAccount]] = [:]
    }
    private let state = Mutex(State())

    func transferred(from: Int, to: Int, amount: Int, in elapsed: Duration) {
        state.withLock {
            $0.transfers.append(Transfer(from: from, to: to, amount: amount))
            $0.transferLatencies.append(elapsed)
        }
    }
    func read(_ sum: Int, expected: Int, in elapsed: Duration) {
        state.withLock {
            $0.readLatencies.append(elapsed)
            if sum != expected { $0.tornReads.append(sum) }
        }
    }
    func observed(_ sum: Int, expected: Int) {
        state.withLock {
            $0.observations += 1
            if sum != expected { $0.tornObservations.append(sum) }
        }
    }
    func failed(_ what: String) { state.withLock { $0.failures.append(what) } }
    func writersStarted(_ count: Int) { state.withLock { $0.writers = count } }
    func writerEnded() { state.withLock { $0.writers -= 1 } }
    var isWriting: Bool { state.withLock { $0.writers > 0 } }
    func observerHolds(_ accounts: [SoakAccount], index: Int) { state.withLock { $0.observersHold[index] = accounts } }
    func observerHolding(_ index: Int) -> [SoakAccount]? { state.withLock { $0.observersHold[index] } }

    var transfers: [Transfer] { state.withLock { $0.transfers } }
    var transferLatencies: [Duration] { state.withLock { $0.transferLatencies } }
    var readLatencies: [Duration] { state.withLock { $0.readLatencies } }
    var tornReads: [Int] { state.withLock { $0.tornReads } }
    var tornObservations: [Int] { state.withLock { $0.tornObservations } }
    var observations: Int { state.withLock { $0.observations } }
    var failures: [String] { state.withLock { $0.failures } }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
